/**
 * CloudEvents with Avro data on a broker whose messages have no headers (Kinesis records), where the
 * binary content mode Kafka uses (avro-kafka.ts) cannot exist: structured mode, the event a JSON
 * object with every attribute as always, its data encoded as on Kafka — the Confluent wire format
 * (magic byte 0, the 4-byte schema id, the Avro bytes) of the event's data under the latest schema of
 * the subject — carried as the JSON format carries binary data: `data_base64` (0.2: base64 text in
 * `data`) with the content type `avro/binary` (`datacontenttype`, 0.2: `contenttype`).
 */
import type { CloudEvent } from '@gatehouse/cloudevents';
import { avroContentType } from './avro-kafka.ts';
import { AvroDataMismatchError, type SchemaRegistryClient } from './schema-registry-client.ts';

/**
 * The event with its data Avro-encoded under `subject`'s latest schema, as bytes in `data` (the
 * JSON format writes them as base64: serializeJsonEvent). Refuses binary data, as Kafka does.
 */
export async function toAvroStructured(
  event: CloudEvent,
  subject: string,
  registry: SchemaRegistryClient,
): Promise<CloudEvent> {
  if (event['data_base64'] !== undefined || Buffer.isBuffer(event.data))
    throw new AvroDataMismatchError(subject, ['/'], 'is binary, which cannot be written with');
  const value = await registry.encode(subject, event.data ?? null);
  const { data: _json, data_base64: _none, ...attributes } = event;
  return event.specversion === '1.0'
    ? { ...attributes, specversion: '1.0', datacontenttype: avroContentType, data: value }
    : { ...attributes, specversion: '0.2', contenttype: avroContentType, data: value };
}
