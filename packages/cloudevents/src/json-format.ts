/**
 * The CloudEvents JSON event format: the body of structured-mode messages on HTTP and Kafka and of
 * every event the gateway pushes to frontends.
 */
import type { CloudEvent } from './cloud-event.ts';
import { InvalidCloudEventError, problem } from './errors.ts';
import { isObject } from './json-object.ts';
import { assertCloudEvent } from './validate.ts';

/** Content type of a structured-mode message. */
export const jsonEventContentType = 'application/cloudevents+json; charset=utf-8';

/** Parses and validates one event; throws InvalidCloudEventError naming every problem. */
export function parseJsonEvent(text: string | Buffer): CloudEvent {
  let value: unknown;
  try {
    value = JSON.parse(text.toString());
  } catch (err) {
    throw new InvalidCloudEventError([
      problem('body', 'json', `the body is not valid JSON: ${(err as Error).message}`),
    ]);
  }
  return fromJsonValue(value);
}

/**
 * Validates an already parsed JSON value as an event. An attribute set to `null` is dropped (the
 * JSON format treats it as absent), so the typed result never holds null where a string belongs;
 * `data: null` is data and stays.
 */
export function fromJsonValue(value: unknown): CloudEvent {
  if (!isObject(value)) return assertCloudEvent(value);
  const event: Record<string, unknown> = {};
  for (const [name, attribute] of Object.entries(value)) {
    if (attribute !== null || name === 'data') event[name] = attribute;
  }
  return assertCloudEvent(event);
}

/** Bytes in `data` (a Buffer set by code) become base64 as the JSON format asks for binary data. */
export function serializeJsonEvent(event: CloudEvent): string {
  if (!(event.data instanceof Uint8Array)) return JSON.stringify(event);
  const { data, ...rest } = event;
  const base64 = Buffer.from(data).toString('base64');
  return JSON.stringify(
    event.specversion === '1.0' ? { ...rest, data_base64: base64 } : { ...rest, data: base64 },
  );
}
