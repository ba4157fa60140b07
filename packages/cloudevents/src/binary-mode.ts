/**
 * Binary content mode, shared by the HTTP and Kafka bindings: context attributes travel as headers
 * named with a prefix (`ce-` on HTTP, `ce_` on Kafka), the data's media type as `content-type`,
 * and the data as the message body (see event-data.ts).
 *
 * Header values are text. Extension values read back are strings (the binding cannot tell `"7"`
 * from `7`), except `gw`: the gateway's object extension travels as JSON in one header (`ce-gw`,
 * `ce_gw`).
 */
import {
  type CloudEvent,
  contentTypeAttribute,
  dataContentType,
  isSupportedSpecVersion,
  type SpecVersion,
} from './cloud-event.ts';
import { type CloudEventProblem, InvalidCloudEventError, problem } from './errors.ts';
import { decodeData, defaultDataContentType, encodeData } from './event-data.ts';
import { validateCloudEvent } from './validate.ts';

export interface BinaryModeCodec {
  prefix: string;
  /** Escapes an attribute's text for the header (HTTP 1.0 percent-encodes). */
  encodeValue(text: string, version: SpecVersion): string;
  decodeValue(text: string, version: SpecVersion | undefined): string;
}

export interface BinaryMessage {
  headers: Record<string, string>;
  body: Buffer;
}

const notAttributes = new Set(['data', 'data_base64']);

export function toBinaryMessage(event: CloudEvent, codec: BinaryModeCodec): BinaryMessage {
  const headers: Record<string, string> = {};
  const contentTypeName = contentTypeAttribute(event.specversion);
  for (const [name, value] of Object.entries(event)) {
    if (notAttributes.has(name) || name === contentTypeName || value === undefined || value === null)
      continue;
    const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
    headers[`${codec.prefix}${name}`] = codec.encodeValue(text, event.specversion);
  }
  headers['content-type'] = dataContentType(event) ?? defaultDataContentType;
  return { headers, body: encodeData(event) };
}

/**
 * Reads an event from lower-cased headers and the body; throws InvalidCloudEventError listing every
 * problem (attributes and data together).
 */
export function fromBinaryMessage(
  headers: Record<string, string>,
  body: Buffer,
  codec: BinaryModeCodec,
): CloudEvent {
  const { prefix } = codec;
  const rawVersion = headers[`${prefix}specversion`];
  if (rawVersion === undefined) {
    throw new InvalidCloudEventError([
      problem(
        'specversion',
        'required',
        `'specversion' is required: send the event as JSON with content-type application/cloudevents+json ` +
          `(structured mode) or set a ${prefix}specversion header (binary mode)`,
      ),
    ]);
  }
  const version = isSupportedSpecVersion(rawVersion) ? rawVersion : undefined;
  const problems: CloudEventProblem[] = [];
  const event: Record<string, unknown> = {};
  for (const [header, raw] of Object.entries(headers)) {
    if (!header.startsWith(prefix)) continue;
    const name = header.slice(prefix.length);
    if (name === '' || notAttributes.has(name)) continue;
    const text = codec.decodeValue(raw, version);
    event[name] = name === 'gw' ? parseGwHeader(header, text, problems) : text;
  }
  const contentType = headers['content-type'];
  if (contentType !== undefined) event[contentTypeAttribute(version ?? '1.0')] = contentType;
  try {
    Object.assign(event, decodeData(body, contentType, version ?? '1.0'));
  } catch (err) {
    if (!(err instanceof InvalidCloudEventError)) throw err;
    problems.push(...err.problems);
  }
  problems.push(...validateCloudEvent(event));
  if (problems.length > 0) throw new InvalidCloudEventError(problems);
  return event as CloudEvent;
}

function parseGwHeader(header: string, text: string, problems: CloudEventProblem[]): unknown {
  try {
    return JSON.parse(text);
  } catch {
    problems.push(problem('gw', 'json', `'gw' must be a JSON object in the ${header} header`));
    return undefined;
  }
}
