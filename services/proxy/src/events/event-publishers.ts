/**
 * Writing a request event to the endpoint's topic, one publisher per target kind:
 * - Kafka: structured mode (one JSON CloudEvent) by default, binary mode (attributes in `ce_`
 *   headers, data as the value) with PROXY_KAFKA_EVENT_MODE=binary; the message key is
 *   `gw.target_partition` (Kafka's murmur2 partitioner, the same partition a Java producer picks;
 *   RIG used Murmur3), and without it the broker spreads messages; an endpoint with a `schema`
 *   writes binary mode with the data Avro-encoded through the schema registry (@gatehouse/avro),
 *   whatever the mode: the registry is asked before anything is produced, so a registry outage
 *   sends nothing;
 * - Kinesis: structured only (records have no headers); the partition key is
 *   `gw.target_partition`, random when absent; an endpoint with a `schema` writes the data
 *   Avro-encoded the same way (the wire format under the subject's latest schema, the registry asked
 *   before anything is written) as the event's binary data: `data_base64` with `datacontenttype:
 *   avro/binary` (@gatehouse/avro, avro-structured.ts);
 * - NATS: see nats-target.ts.
 * A publish resolves once the broker has accepted the event and rejects otherwise.
 */
import { type SchemaRegistryClient, toAvroKafka, toAvroStructured } from '@gatehouse/avro';
import type { Bus } from '@gatehouse/bus';
import {
  type CloudEvent,
  type KafkaEventMessage,
  kafkaMessageKey,
  serializeJsonEvent,
  targetPartition,
  toBinaryKafka,
  toStructuredKafka,
} from '@gatehouse/cloudevents';

export interface EventPublisher {
  /** `schema`: the registry subject of an Avro endpoint (Kafka and Kinesis). */
  publish(topic: string, event: CloudEvent, schema?: string): Promise<void>;
}

/** An endpoint has a `schema` but the gateway has no KAFKA_SCHEMA_REGISTRY_HOST. */
export class AvroNotConfiguredError extends Error {
  override readonly name = 'AvroNotConfiguredError';
}

function configured(registry: SchemaRegistryClient | undefined): SchemaRegistryClient {
  if (registry === undefined)
    throw new AvroNotConfiguredError('Avro (schema) needs KAFKA_SCHEMA_REGISTRY_HOST on this gateway');
  return registry;
}

export class KafkaEventPublisher implements EventPublisher {
  private readonly bus: Bus;
  private readonly mode: 'structured' | 'binary';
  private readonly registry: SchemaRegistryClient | undefined;

  constructor(bus: Bus, mode: 'structured' | 'binary', registry?: SchemaRegistryClient) {
    this.bus = bus;
    this.mode = mode;
    this.registry = registry;
  }

  async publish(topic: string, event: CloudEvent, schema?: string): Promise<void> {
    const message = await this.encode(event, schema);
    const key = kafkaMessageKey(event);
    await this.bus.publish(topic, {
      ...(key !== undefined && { key }),
      value: message.value,
      headers: message.headers,
    });
  }

  private encode(
    event: CloudEvent,
    schema: string | undefined,
  ): KafkaEventMessage | Promise<KafkaEventMessage> {
    if (schema === undefined) return this.mode === 'binary' ? toBinaryKafka(event) : toStructuredKafka(event);
    return toAvroKafka(event, schema, configured(this.registry));
  }
}

export class KinesisEventPublisher implements EventPublisher {
  private readonly bus: Bus;
  private readonly registry: SchemaRegistryClient | undefined;

  constructor(bus: Bus, registry?: SchemaRegistryClient) {
    this.bus = bus;
    this.registry = registry;
  }

  async publish(topic: string, event: CloudEvent, schema?: string): Promise<void> {
    const written =
      schema === undefined ? event : await toAvroStructured(event, schema, configured(this.registry));
    const key = targetPartition(event);
    await this.bus.publish(topic, { ...(key !== undefined && { key }), value: serializeJsonEvent(written) });
  }
}
