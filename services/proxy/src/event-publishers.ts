/**
 * Writing a request event to the endpoint's topic, one publisher per target kind:
 * - Kafka: structured mode (one JSON CloudEvent) by default, binary mode (attributes in `ce_`
 *   headers, data as the value) with PROXY_KAFKA_EVENT_MODE=binary; the message key is
 *   `gw.target_partition` (Kafka's murmur2 partitioner, the same partition a Java producer picks;
 *   RIG used Murmur3), and without it the broker spreads messages;
 * - Kinesis: structured only (records have no headers); the partition key is
 *   `gw.target_partition`, random when absent;
 * - NATS: see nats-target.ts.
 * A publish resolves once the broker has accepted the event and rejects otherwise.
 */
import type { Bus } from '@gatehouse/bus';
import {
  type CloudEvent,
  kafkaMessageKey,
  serializeJsonEvent,
  targetPartition,
  toBinaryKafka,
  toStructuredKafka,
} from '@gatehouse/cloudevents';

export interface EventPublisher {
  publish(topic: string, event: CloudEvent): Promise<void>;
}

export class KafkaEventPublisher implements EventPublisher {
  private readonly bus: Bus;
  private readonly mode: 'structured' | 'binary';

  constructor(bus: Bus, mode: 'structured' | 'binary') {
    this.bus = bus;
    this.mode = mode;
  }

  async publish(topic: string, event: CloudEvent): Promise<void> {
    const message = this.mode === 'binary' ? toBinaryKafka(event) : toStructuredKafka(event);
    const key = kafkaMessageKey(event);
    await this.bus.publish(topic, {
      ...(key !== undefined && { key }),
      value: message.value,
      headers: message.headers,
    });
  }
}

export class KinesisEventPublisher implements EventPublisher {
  private readonly bus: Bus;

  constructor(bus: Bus) {
    this.bus = bus;
  }

  async publish(topic: string, event: CloudEvent): Promise<void> {
    const key = targetPartition(event);
    await this.bus.publish(topic, { ...(key !== undefined && { key }), value: serializeJsonEvent(event) });
  }
}
