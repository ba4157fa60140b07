/**
 * The attributes a reader routes a fan-out record by, copied into the record's headers next to the
 * structured JSON body: `ce_type`, `ce_source` and `ce_id`, the names of the Kafka binding's binary
 * mode (the same names on every bus with headers: Kafka, Redis, NATS, memory). The body stays the
 * whole event, as clients get it; the headers only let a push-hub replica tell from the type
 * whether any of its connections could want the event, and from the source and id whether it holds
 * it already, before it turns the body into text and parses it.
 *
 * No `ce_specversion`: the record is not in binary mode (a reader that tells the modes apart by it
 * still reads the body). A value a header could not carry as it is (a control character: NATS
 * headers end at a line break) is not copied, and then none is: a reader without all three reads
 * the body, as it does a record from an older publisher or a bus without headers (Kinesis).
 */
import type { CloudEvent } from './cloud-event.ts';

export const streamTypeHeader = 'ce_type';
export const streamSourceHeader = 'ce_source';
export const streamIdHeader = 'ce_id';

/** What a fan-out record's headers say of its event. */
export interface StreamEventHeaders {
  type: string;
  source: string;
  id: string;
}

const unsafe = /[\u0000-\u001f\u007f]/;

/** The routing headers for the event; empty when one of its attributes cannot travel as a header. */
export function streamEventHeaders(
  event: Pick<CloudEvent, 'type' | 'source' | 'id'>,
): Record<string, string> {
  const { type, source, id } = event;
  if (typeof type !== 'string' || typeof source !== 'string' || typeof id !== 'string') return {};
  if (unsafe.test(type) || unsafe.test(source) || unsafe.test(id)) return {};
  return { [streamTypeHeader]: type, [streamSourceHeader]: source, [streamIdHeader]: id };
}

/** The type, source and id a record's headers name, or undefined unless it carries all three. */
export function readStreamEventHeaders(headers: Record<string, string>): StreamEventHeaders | undefined {
  const type = headers[streamTypeHeader];
  if (type === undefined) return undefined;
  const source = headers[streamSourceHeader];
  const id = headers[streamIdHeader];
  if (source === undefined || id === undefined) return undefined;
  return { type, source, id };
}
