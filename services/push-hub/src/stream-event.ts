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
  const single = json.includes('\n') ? JSON.stringify(event) : json;
  return { position, type, event, json: single };
}
