/**
 * The record a flow's `kafka.notification` / `nats.notification` task asks for, read from the task's
 * mapped input and bounded before anything reaches a broker:
 *   topic (NATS: or subject)  where to publish: a Kafka topic name, a NATS subject without wildcards
 *   key                       optional record key (Kafka: the partition; kept in order per key)
 *   headers                   optional map of text values (numbers and booleans as text)
 *   body                      text and bytes as they are, anything else as JSON
 *   schema                    optional (Kafka): the registry subject the body is Avro-encoded under
 * At most FLOW_NOTIFICATION_MAX_HEADERS headers and FLOW_NOTIFICATION_MAX_BYTES of body, key and
 * headers together (413 beyond); a name or value a broker cannot carry is refused (400).
 */
import type { OutgoingMessage } from '@gatehouse/bus';
import { AppException } from '@gatehouse/functions';

export interface NotificationLimits {
  maxBytes: number;
  maxHeaders: number;
}

export interface Notification {
  topic: string;
  message: OutgoingMessage & { value: Buffer };
  /** The Avro subject of the body, when the flow named one. */
  schema: string | undefined;
  /** The body before encoding, for Avro. */
  body: unknown;
}

// Kafka's own rule for topic names (kafka.common.internals.Topic).
const kafkaTopic = /^[A-Za-z0-9._-]{1,249}$/;
// A NATS subject to publish on: dot-separated tokens of printable characters, no wildcards.
const natsSubject = /^[!-)+-\-/-=?-~]+(\.[!-)+-\-/-=?-~]+)*$/;
const maxSubjectLength = 255;
// A header name both buses carry: printable ASCII without the colon and spaces (NATS, HTTP-like).
const headerName = /^[!-9;-~]{1,255}$/;
const lineBreakOrNul = /[\r\n\0]/;

export function kafkaNotification(input: unknown, limits: NotificationLimits): Notification {
  const map = mapOf(input, 'kafka.notification');
  const topic = text(map['topic']);
  if (topic === undefined || !kafkaTopic.test(topic) || topic === '.' || topic === '..')
    throw new AppException(400, 'kafka.notification needs a topic: 1 to 249 of A-Z a-z 0-9 . _ -');
  return notification(map, topic, limits);
}

export function natsNotification(input: unknown, limits: NotificationLimits): Notification {
  const map = mapOf(input, 'nats.notification');
  const subject = text(map['subject'] ?? map['topic']);
  if (subject === undefined || subject.length > maxSubjectLength || !natsSubject.test(subject))
    throw new AppException(
      400,
      `nats.notification needs a subject (or topic): up to ${maxSubjectLength} printable characters in dot-separated tokens, without the wildcards * and >`,
    );
  if (map['schema'] !== undefined)
    throw new AppException(400, 'nats.notification writes no Avro: schema is for kafka.notification');
  return notification(map, subject, limits);
}

function notification(map: Record<string, unknown>, topic: string, limits: NotificationLimits): Notification {
  const headers = headersOf(map['headers'], limits.maxHeaders);
  const key = map['key'] === undefined || map['key'] === null ? undefined : text(map['key']);
  if (key === undefined && map['key'] !== undefined && map['key'] !== null)
    throw new AppException(400, 'The notification key must be text or a number');
  const schema = map['schema'] === undefined ? undefined : text(map['schema']);
  if (map['schema'] !== undefined && (schema === undefined || schema === ''))
    throw new AppException(400, 'The notification schema must name a registry subject');
  const value = recordValue(map['body'], limits.maxBytes);
  if (value.contentType && headers['content-type'] === undefined) headers['content-type'] = value.contentType;
  let bytes = value.bytes.length + Buffer.byteLength(key ?? '');
  for (const [name, v] of Object.entries(headers)) bytes += name.length + Buffer.byteLength(v);
  if (bytes > limits.maxBytes)
    throw new AppException(
      413,
      `The notification is larger than FLOW_NOTIFICATION_MAX_BYTES (${limits.maxBytes}) with its key and headers`,
    );
  return {
    topic,
    message: { value: value.bytes, headers, ...(key !== undefined && { key }) },
    schema,
    body: map['body'],
  };
}

function headersOf(value: unknown, maxHeaders: number): Record<string, string> {
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  if (value === undefined || value === null) return headers;
  if (!isPlainMap(value)) throw new AppException(400, 'The notification headers must be a map of text');
  let count = 0;
  for (const [name, v] of Object.entries(value)) {
    if (++count > maxHeaders)
      throw new AppException(
        413,
        `The notification has more headers than FLOW_NOTIFICATION_MAX_HEADERS (${maxHeaders})`,
      );
    const t = text(v);
    if (!headerName.test(name) || t === undefined || lineBreakOrNul.test(t))
      throw new AppException(
        400,
        `Notification header ${JSON.stringify(name.slice(0, 64))}: names are printable ASCII without ':' or spaces, values text without line breaks`,
      );
    headers[name.toLowerCase()] = t;
  }
  return headers;
}

/** Text and bytes as they are; anything else as JSON, bounded before it is written out. */
function recordValue(body: unknown, maxBytes: number): { bytes: Buffer; contentType?: string } {
  if (body === undefined || body === null) return { bytes: Buffer.alloc(0) };
  if (Buffer.isBuffer(body)) return { bytes: body };
  if (typeof body === 'string') return { bytes: Buffer.from(body) };
  const json = JSON.stringify(body);
  if (json === undefined) throw new AppException(400, 'The notification body cannot be written as JSON');
  if (json.length > maxBytes)
    throw new AppException(413, `The notification is larger than FLOW_NOTIFICATION_MAX_BYTES (${maxBytes})`);
  return { bytes: Buffer.from(json), contentType: 'application/json' };
}

function mapOf(input: unknown, route: string): Record<string, unknown> {
  if (!isPlainMap(input))
    throw new AppException(400, `${route} takes a map: topic, key, headers, body, schema`);
  return input;
}

function isPlainMap(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Buffer.isBuffer(value))
    return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}
