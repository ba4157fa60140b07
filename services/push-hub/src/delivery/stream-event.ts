/**
 * How the hub reads one message of the fan-out stream, live or replayed: a CloudEvent JSON object
 * with a string `type`, kept as parsed once and as JSON text on one line (an SSE `data:` line).
 *
 * An event in the gateway's own namespace (a `gw.…` type or the source `gatehouse`) is not taken:
 * the publisher refuses those, so one on the stream was put there past it (an old record, a
 * producer with access to the stream) and would read as the hub's own event to every subscriber.
 */
import {
  inGatewayNamespace,
  isGatewayEventType,
  isGatewaySource,
  readStreamEventHeaders,
  type StreamEventHeaders,
} from '@gatehouse/cloudevents';
import type { RingEvent } from './event-ring.ts';

export type UnreadableReason = 'not_json' | 'no_type' | 'reserved';

export function readStreamEvent(position: string, json: string): RingEvent | UnreadableReason {
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(json);
  } catch {
    return 'not_json';
  }
  const type = event?.['type'];
  if (typeof type !== 'string') return 'no_type';
  if (inGatewayNamespace({ type, source: event['source'] as string })) return 'reserved';
  // JSON.parse took the text, so a raw CR or LF in it is white space between tokens (in a string it
  // must be escaped): a space is the same JSON. Not JSON.stringify, which recurses and throws on an
  // event nested a few thousand levels deep.
  const single = json.includes('\n') || json.includes('\r') ? json.replace(/[\r\n]/g, ' ') : json;
  return { position, type, event, json: single };
}

/**
 * The type, source and id a record's headers name (stream-headers in @gatehouse/cloudevents), when
 * the hub may go by them without reading the body; undefined when it has not all three (an older
 * publisher, a bus without headers) or they name the gateway's own namespace: the body is read then.
 */
export function readEventHeaders(headers: Record<string, string>): StreamEventHeaders | undefined {
  const h = readStreamEventHeaders(headers);
  return h === undefined || reservedType(h.type) || reservedSource(h.source) ? undefined : h;
}

/**
 * A check remembered for the values seen last: a stream carries few types and sources, and the
 * namespace check folds case and Unicode forms (a few allocations) for each. Bounded: past `limit`
 * values it starts over.
 */
function remembered(check: (value: string) => boolean, limit = 1024): (value: string) => boolean {
  const seen = new Map<string, boolean>();
  return (value) => {
    let answer = seen.get(value);
    if (answer === undefined) {
      if (seen.size >= limit) seen.clear();
      answer = check(value);
      seen.set(value, answer);
    }
    return answer;
  };
}

const reservedType = remembered(isGatewayEventType);
const reservedSource = remembered(isGatewaySource);
