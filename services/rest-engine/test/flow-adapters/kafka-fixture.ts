/** Kafka for the flow adapter tests: unique topics on the project broker, a producer, a reader. */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dependencyAddress, waitFor } from '@gatehouse/testkit';
import { type Admin, Kafka, type KafkaMessage, logLevel, type Producer } from 'kafkajs';
import { configFolder } from '../engine-fixture.ts';

export const fixtureApp = new URL('../fixtures/flow-adapter/', import.meta.url).pathname;

export class KafkaTestKit {
  readonly kafka = new Kafka({
    brokers: dependencyAddress.kafkaBrokers,
    clientId: 'flow-adapter-test',
    logLevel: logLevel.NOTHING,
  });
  readonly admin: Admin = this.kafka.admin();
  readonly producer: Producer = this.kafka.producer({ allowAutoTopicCreation: false });
  private readonly closers: Array<() => Promise<void>> = [];

  async open(): Promise<void> {
    await this.admin.connect();
    await this.producer.connect();
  }

  /** A topic name no other test uses. */
  name(what: string): string {
    return `fa-${what}-${randomUUID().slice(0, 8)}`;
  }

  async createTopic(topic: string, partitions = 1): Promise<void> {
    await this.admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
  }

  /** Every record of `topic` so far, read by a group of its own. */
  async reader(topic: string): Promise<KafkaMessage[]> {
    const got: KafkaMessage[] = [];
    const consumer = this.kafka.consumer({ groupId: this.name('reader') });
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        got.push(message);
      },
    });
    this.closers.push(() => consumer.disconnect());
    return got;
  }

  async committed(groupId: string, topic: string): Promise<Map<number, number>> {
    const [offsets] = await this.admin.fetchOffsets({ groupId, topics: [topic] });
    return new Map((offsets?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
  }

  async waitCommitted(groupId: string, topic: string, partition: number, offset: number): Promise<void> {
    await waitFor(async () => (await this.committed(groupId, topic)).get(partition) === offset, {
      timeoutMs: 20_000,
      intervalMs: 100,
      what: `${groupId} to commit ${topic}/${partition} at ${offset}`,
    });
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.closers.map((c) => c()));
    await Promise.allSettled([this.producer.disconnect(), this.admin.disconnect()]);
  }
}

/** Writes an adapter file into a new temp folder and returns its `file:` location. */
export function adapterFile(name: string, text: string): string {
  const folder = configFolder({ [name]: text });
  return `file:${join(folder, name)}`;
}

export function writeText(path: string, text: string): void {
  writeFileSync(path, text);
}

/** What the fixture's functions saw in this process. */
export function seen(): Array<Record<string, unknown>> {
  const store = globalThis as { adapterSeen?: Array<Record<string, unknown>> };
  store.adapterSeen ??= [];
  return store.adapterSeen;
}
