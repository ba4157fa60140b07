/**
 * The CloudEvents HTTP protocol binding, as `POST /_gw/v1/events` and the message endpoints read it
 * and as the proxy writes events to HTTP targets.
 *
 * Mode selection on reading, by content type (header names are case-insensitive):
 * | content type                              | ce-specversion | mode                              |
 * |-------------------------------------------|----------------|-----------------------------------|
 * | application/cloudevents-batch+json        | any            | batch: UnsupportedCloudEventError |
 * | application/cloudevents+json              | any (ignored)  | structured                        |
 * | application/cloudevents+<other format>    | any            | UnsupportedCloudEventError        |
 * | application/json                          | absent         | structured (the spec's fallback)  |
 * | anything else, or none                    | needed         | binary                            |
 *
 * In binary mode with spec version 1.0, header values are percent-encoded as the 1.0 binding asks
 * (space, `"`, `%` and everything outside printable ASCII), so any text survives an HTTP header.
 */
import { type BinaryModeCodec, fromBinaryMessage, toBinaryMessage } from './binary-mode.ts';
import type { CloudEvent } from './cloud-event.ts';
import { UnsupportedCloudEventError } from './errors.ts';
import { jsonEventContentType, parseJsonEvent, serializeJsonEvent } from './json-format.ts';
import { essence } from './media-type.ts';
import { headerText } from './header-text.ts';

/** Header names in any case; repeated headers as arrays, as node:http gives them. */
export interface HttpMessage {
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** An event ready to send: lower-case header names. */
export interface HttpEventMessage {
  headers: Record<string, string>;
  body: Buffer;
}

export type HttpMode = 'structured' | 'binary' | 'batch';

export const batchModeNotSupported =
  'The batched CloudEvents HTTP transport binding mode is currently not supported.';

const httpCodec: BinaryModeCodec = {
  prefix: 'ce-',
  encodeValue: (text, version) => (version === '1.0' ? percentEncode(text) : text),
  decodeValue: (text, version) => (version === '1.0' ? percentDecode(text) : text),
};

export function httpMode(headers: HttpMessage['headers']): HttpMode {
  return modeOf(headerText(headers));
}

/** Throws InvalidCloudEventError (answer 400) or UnsupportedCloudEventError (answer 415). */
export function parseHttpEvent(message: HttpMessage): CloudEvent {
  const headers = headerText(message.headers);
  const mode = modeOf(headers);
  if (mode === 'batch') throw new UnsupportedCloudEventError('batch-mode', batchModeNotSupported);
  if (mode === 'binary') return fromBinaryMessage(headers, message.body, httpCodec);
  const format = cloudEventsFormat(headers['content-type']);
  if (format !== undefined && format !== 'json') {
    throw new UnsupportedCloudEventError(
      'event-format',
      `The CloudEvents event format '${format}' is not supported; use application/cloudevents+json.`,
    );
  }
  return parseJsonEvent(message.body);
}

export function toStructuredHttp(event: CloudEvent): HttpEventMessage {
  return { headers: { 'content-type': jsonEventContentType }, body: Buffer.from(serializeJsonEvent(event)) };
}

export function toBinaryHttp(event: CloudEvent): HttpEventMessage {
  return toBinaryMessage(event, httpCodec);
}

function modeOf(headers: Record<string, string>): HttpMode {
  const type = essence(headers['content-type']);
  if (type?.startsWith('application/cloudevents-batch')) return 'batch';
  if (type?.startsWith('application/cloudevents+')) return 'structured';
  if (type === 'application/json' && headers['ce-specversion'] === undefined) return 'structured';
  return 'binary';
}

/** `json` for application/cloudevents+json; undefined for a type that is not a CloudEvents format. */
function cloudEventsFormat(contentType: string | undefined): string | undefined {
  const type = essence(contentType);
  return type?.startsWith('application/cloudevents+')
    ? type.slice('application/cloudevents+'.length)
    : undefined;
}

/** Percent-encodes space, `"`, `%` and every character outside printable ASCII, as UTF-8 bytes. */
export function percentEncode(text: string): string {
  return text.replace(/[^\x21\x23\x24\x26-\x7e]+/g, (run) =>
    [...Buffer.from(run, 'utf8')]
      .map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)
      .join(''),
  );
}

/** The reverse of percentEncode; a value with a malformed escape is taken as it is. */
export function percentDecode(text: string): string {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
