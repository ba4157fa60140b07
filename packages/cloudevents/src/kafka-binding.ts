/**
 * The CloudEvents Kafka protocol binding (1.0), applied to 0.2 and 1.0 events alike.
 *
 * Reading: structured when the `content-type` header is `application/cloudevents+json`, or when it
 * is absent or `application/json` and there is no `ce_specversion` header (a JSON event produced by
 * a tool that sets no CloudEvents headers, the same fallback the HTTP binding has); binary otherwise, with the attributes in `ce_` headers and the data's media type in
 * `content-type` (so `content-type: some-weird-type` is binary data of that type). Other
 * `application/cloudevents+` formats and batches are UnsupportedCloudEventError.
 *
 * The message key decides the partition. Precedence: `gw.target_partition`, then the CloudEvents
 * partitioning extension's `partitionkey`, then none (the broker spreads such messages). Reading
 * does not copy the key into the event.
 */
import { type BinaryModeCodec, fromBinaryMessage, toBinaryMessage } from './binary-mode.ts';
import type { CloudEvent } from './cloud-event.ts';
import { UnsupportedCloudEventError } from './errors.ts';
import { targetPartition } from './gw-extension.ts';
import { jsonEventContentType, parseJsonEvent, serializeJsonEvent } from './json-format.ts';
import { essence } from './media-type.ts';

type HeaderValue = string | Buffer | (string | Buffer)[] | undefined;

/** A consumed record: kafkajs gives Buffers, the bus strings; both work. */
export interface KafkaRecord {
  key?: string | Buffer | null | undefined;
  value: Buffer | string | null;
  headers?: Record<string, HeaderValue>;
}

/** A record ready to produce; the bus's OutgoingMessage has this shape. */
export interface KafkaEventMessage {
  key?: string;
  value: Buffer;
  headers: Record<string, string>;
}

export type KafkaMode = 'structured' | 'binary';

const kafkaCodec: BinaryModeCodec = {
  prefix: 'ce_',
  encodeValue: (text) => text,
  decodeValue: (text) => text,
};

export function kafkaMode(headers: KafkaRecord['headers'] = {}): KafkaMode {
  return modeOf(textHeaders(headers));
}

/** Throws InvalidCloudEventError or UnsupportedCloudEventError. */
export function parseKafkaEvent(record: KafkaRecord): CloudEvent {
  const headers = textHeaders(record.headers ?? {});
  const value = record.value === null ? Buffer.alloc(0) : Buffer.from(record.value);
  const type = essence(headers['content-type']);
  if (type?.startsWith('application/cloudevents-batch')) {
    throw new UnsupportedCloudEventError('batch-mode', 'Batches of CloudEvents are not supported on Kafka.');
  }
  if (type?.startsWith('application/cloudevents+') && type !== 'application/cloudevents+json') {
    const format = type.slice('application/cloudevents+'.length);
    throw new UnsupportedCloudEventError(
      'event-format',
      `The CloudEvents event format '${format}' is not supported; use application/cloudevents+json.`,
    );
  }
  return modeOf(headers) === 'structured'
    ? parseJsonEvent(value)
    : fromBinaryMessage(headers, value, kafkaCodec);
}

export function toStructuredKafka(event: CloudEvent): KafkaEventMessage {
  return withKey(event, {
    value: Buffer.from(serializeJsonEvent(event)),
    headers: { 'content-type': jsonEventContentType },
  });
}

export function toBinaryKafka(event: CloudEvent): KafkaEventMessage {
  const { headers, body } = toBinaryMessage(event, kafkaCodec);
  return withKey(event, { value: body, headers });
}

/** The message key: `gw.target_partition`, else `partitionkey`, else undefined. */
export function kafkaMessageKey(event: CloudEvent): string | undefined {
  const partitionKey = event['partitionkey'];
  return (
    targetPartition(event) ??
    (typeof partitionKey === 'string' && partitionKey !== '' ? partitionKey : undefined)
  );
}

function withKey(event: CloudEvent, message: KafkaEventMessage): KafkaEventMessage {
  const key = kafkaMessageKey(event);
  return key === undefined ? message : { key, ...message };
}

function modeOf(headers: Record<string, string>): KafkaMode {
  const type = essence(headers['content-type']);
  if (type?.startsWith('application/cloudevents')) return 'structured';
  const plainJson = type === undefined || type === 'application/json';
  if (plainJson && headers['ce_specversion'] === undefined) return 'structured';
  return 'binary';
}

/** Header names lower-cased and values as UTF-8 text; a repeated header keeps its last value. */
function textHeaders(headers: Record<string, HeaderValue>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const last = Array.isArray(value) ? value.at(-1) : value;
    if (last !== undefined) out[name.toLowerCase()] = last.toString();
  }
  return out;
}
