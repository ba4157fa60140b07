/**
 * CloudEvents on Kafka with Avro data, as RIG wrote them (KAFKA_SERIALIZER=avro): binary mode, the
 * attributes in `ce_` headers, `content-type: avro/binary`, and the event's data as the value in the
 * Confluent wire format (magic byte 0, the 4-byte schema id, the Avro bytes) under the latest schema
 * of the endpoint's subject.
 *
 * Reading goes the other way for any producer: a value in the wire format whose `content-type` is
 * `avro/binary` or absent is decoded with the schema its id names and handed on as the JSON
 * message it stands for — binary mode (a `ce_specversion` header) with JSON data, or else a JSON
 * value (a whole CloudEvent, or a payload to wrap) — so the JSON path reads it as today. JSON never
 * starts with the byte 0, so the magic byte tells the two apart.
 */
import { type CloudEvent, essence, type KafkaEventMessage, toBinaryKafka } from '@gatehouse/cloudevents';
import { AvroDataMismatchError, type SchemaRegistryClient } from './schema-registry-client.ts';

export const avroContentType = 'avro/binary';
const magicByte = 0;
/** Magic byte and schema id. */
const wireHeaderBytes = 5;

export interface KafkaValue {
  value: Buffer;
  headers: Record<string, string>;
}

/** The event in binary mode with its data Avro-encoded under `subject`'s latest schema. */
export async function toAvroKafka(
  event: CloudEvent,
  subject: string,
  registry: SchemaRegistryClient,
): Promise<KafkaEventMessage> {
  if (event.data_base64 !== undefined || Buffer.isBuffer(event.data))
    throw new AvroDataMismatchError(subject, ['/'], 'is binary, which cannot be written with');
  const message = toBinaryKafka(event);
  const value = await registry.encode(subject, event.data ?? null);
  return { ...message, value, headers: { ...message.headers, 'content-type': avroContentType } };
}

/** Whether the message's value is Avro in the wire format (by its content type and magic byte). */
export function isAvroMessage({ value, headers }: KafkaValue): boolean {
  const type = essence(headers['content-type']);
  return (
    (type === undefined || type === avroContentType) &&
    value.length > wireHeaderBytes &&
    value[0] === magicByte
  );
}

/** An Avro message as the JSON message it stands for; any other message as it is. */
export async function avroToJsonMessage<M extends KafkaValue>(
  message: M,
  registry: SchemaRegistryClient,
): Promise<M> {
  if (!isAvroMessage(message)) return message;
  const decoded = await registry.decode(message.value);
  const headers = { ...message.headers };
  if (headers['ce_specversion'] !== undefined) headers['content-type'] = 'application/json';
  else delete headers['content-type'];
  return { ...message, value: Buffer.from(jsonText(decoded)), headers };
}

/** Avro `bytes` and `fixed` values (Buffers) become base64 text, as JSON has no bytes. */
function jsonText(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key, v) {
    const raw = this[key];
    return Buffer.isBuffer(raw) ? raw.toString('base64') : v;
  });
}
