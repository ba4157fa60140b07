/**
 * The data of an event as message bytes, for binary mode on HTTP and Kafka, where the body is the
 * data and the content type says how to read it:
 * - JSON types (`application/json`, `+json`): the parsed JSON value;
 * - text types (`text/*`, XML …): the text as a string;
 * - anything else, or no content type: opaque bytes, as `data_base64` in 1.0 and as a base64
 *   string in `data` in 0.2 (the 0.2 JSON format's rule for binary data).
 * Writing reverses this; an event without a content type is written as JSON.
 */
import { type CloudEvent, dataContentType, type SpecVersion } from './cloud-event.ts';
import { InvalidCloudEventError, problem } from './errors.ts';
import { isJsonMediaType, isTextMediaType } from './media-type.ts';

/** The content type written for an event that names none: its data is JSON in the JSON format. */
export const defaultDataContentType = 'application/json';

export interface DecodedData {
  data?: unknown;
  data_base64?: string;
}

export function decodeData(body: Buffer, contentType: string | undefined, version: SpecVersion): DecodedData {
  if (body.length === 0) return {};
  if (isJsonMediaType(contentType)) return { data: parseJsonData(body, contentType!) };
  if (isTextMediaType(contentType)) return { data: body.toString('utf8') };
  const base64 = body.toString('base64');
  return version === '1.0' ? { data_base64: base64 } : { data: base64 };
}

export function encodeData(event: CloudEvent): Buffer {
  if (event.specversion === '1.0' && typeof event.data_base64 === 'string') {
    return Buffer.from(event.data_base64, 'base64');
  }
  const data = event.data;
  if (data === undefined) return Buffer.alloc(0);
  if (data instanceof Uint8Array) return Buffer.from(data);
  const contentType = dataContentType(event) ?? defaultDataContentType;
  if (typeof data !== 'string' || isJsonMediaType(contentType)) return Buffer.from(JSON.stringify(data));
  if (isTextMediaType(contentType) || event.specversion === '1.0') return Buffer.from(data, 'utf8');
  return Buffer.from(data, 'base64');
}

function parseJsonData(body: Buffer, contentType: string): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new InvalidCloudEventError([
      problem(
        'data',
        'json',
        `the data is not valid JSON although its content type is ${contentType}: ${(err as Error).message}`,
      ),
    ]);
  }
}
