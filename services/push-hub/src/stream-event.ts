/**
 * How the hub reads one message of the fan-out stream, live or replayed: a CloudEvent JSON object
 * with a string `type`, kept as parsed once and as JSON text on one line (an SSE `data:` line).
 */
import type { RingEvent } from './event-ring.ts';

export type UnreadableReason = 'not_json' | 'no_type';

export function readStreamEvent(position: string, json: string): RingEvent | UnreadableReason {
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(json);
  } catch {
    return 'not_json';
  }
  const type = event?.['type'];
  if (typeof type !== 'string') return 'no_type';
  // JSON.parse took the text, so a raw CR or LF in it is white space between tokens (in a string it
  // must be escaped): a space is the same JSON. Not JSON.stringify, which recurses and throws on an
  // event nested a few thousand levels deep.
  const single = json.includes('\n') || json.includes('\r') ? json.replace(/[\r\n]/g, ' ') : json;
  return { position, type, event, json: single };
}
