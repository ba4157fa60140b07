/**
 * A Kafka topic's id: the UUID the broker gives a topic when it creates it, so a topic deleted and
 * created again under the same name has another one. It is the topic's epoch in its stream
 * positions (kafka-position.ts): offsets of one topic id say nothing about those of another.
 *
 * kafkajs does not read it: its Metadata requests stop at version 6, and topic ids came with
 * version 10 (Kafka 2.8). One Metadata request of version 10–12 is sent on kafkajs' own connection
 * to the seed broker (its TLS, SASL and socket factory), encoded and read here; the reading stops
 * at the topic's id. A broker too old for it has no topic ids: undefined, and positions carry no
 * epoch, as before.
 */
import type { Kafka } from 'kafkajs';

const METADATA = 3;
const UNKNOWN_TOPIC_OR_PARTITION = 3;
const NO_TOPIC_ID = '0'.repeat(32);

/** What this module needs of kafkajs' internal seed broker. */
interface SeedBroker {
  versions?: Record<number, { minVersion: number; maxVersion: number }>;
  connectionPool: { send(request: unknown): Promise<unknown> };
}
interface InternalCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  brokerPool: { seedBroker?: SeedBroker; versions?: SeedBroker['versions'] };
}

/** Asks for topic ids over a connection of its own, made on first use. */
export class KafkaTopicIds {
  private readonly kafka: Kafka;
  private cluster: Promise<InternalCluster> | undefined;

  constructor(kafka: Kafka) {
    this.kafka = kafka;
  }

  /** The topic's id as 32 hex digits; undefined for a topic that does not exist or a broker without ids. */
  async of(topic: string): Promise<string | undefined> {
    const cluster = await this.connected();
    const broker = cluster.brokerPool.seedBroker;
    const range = (broker?.versions ?? cluster.brokerPool.versions)?.[METADATA];
    if (!broker || !range || range.maxVersion < 10) return undefined;
    const version = Math.min(range.maxVersion, 12);
    const answer = (await broker.connectionPool.send(metadataRequest(topic, version))) as TopicIdAnswer;
    if (answer.errorCode === UNKNOWN_TOPIC_OR_PARTITION || answer.topicId === NO_TOPIC_ID) return undefined;
    if (answer.errorCode !== 0) throw new Error(`metadata of ${topic} answered error ${answer.errorCode}`);
    return answer.topicId;
  }

  async close(): Promise<void> {
    const cluster = this.cluster;
    this.cluster = undefined;
    await (await cluster?.catch(() => undefined))?.disconnect();
  }

  private connected(): Promise<InternalCluster> {
    this.cluster ??= (async () => {
      const cluster = internalCluster(this.kafka);
      await cluster.connect();
      return cluster;
    })().catch((err: unknown) => {
      this.cluster = undefined;
      throw err;
    });
    return this.cluster;
  }
}

/** kafkajs' own cluster factory, which it keeps behind a symbol. */
function internalCluster(kafka: Kafka): InternalCluster {
  const symbol = Object.getOwnPropertySymbols(kafka).find(
    (s) => s.description === 'private:Kafka:createCluster',
  );
  if (!symbol) throw new Error('this kafkajs has no cluster factory where 2.2 keeps it');
  const create = (kafka as unknown as Record<symbol, (o: object) => InternalCluster>)[symbol]!;
  return create({ allowAutoTopicCreation: false, metadataMaxAge: 300_000 });
}

interface TopicIdAnswer {
  errorCode: number;
  topicId: string;
}

/** A Metadata request for one topic (flexible versions: header v2, compact strings, tag buffers). */
function metadataRequest(topic: string, version: number) {
  const name = Buffer.from(topic, 'utf8');
  const body = Buffer.concat([
    Buffer.from([0]), // the request header's tag buffer: kafkajs writes a header of version 1
    uvarint(2), // one topic
    Buffer.alloc(16), // no topic id: asked by name
    uvarint(name.length + 1),
    name,
    Buffer.from([0]), // the topic's tag buffer
    Buffer.from([0]), // allow_auto_topic_creation: false
    ...(version === 10 ? [Buffer.from([0])] : []), // include_cluster_authorized_operations
    Buffer.from([0]), // include_topic_authorized_operations
    Buffer.from([0]), // the body's tag buffer
  ]);
  return {
    request: {
      apiKey: METADATA,
      apiVersion: version,
      apiName: 'Metadata',
      // kafkajs' Encoder is written as its `buf` and `buffer`.
      encode: async () => ({ buf: body, buffer: body }),
    },
    response: {
      decode: async (payload: Buffer) => readTopicId(payload),
      parse: async (answer: TopicIdAnswer) => answer,
    },
  };
}

/** Reads a Metadata answer (versions 10–12, after the correlation id) up to its first topic's id. */
export function readTopicId(payload: Buffer): TopicIdAnswer {
  const r = new Reader(payload);
  r.tags(); // the response header's
  r.skip(4); // throttle_time_ms
  for (let brokers = r.uvarint() - 1; brokers > 0; brokers--) {
    r.skip(4); // node_id
    r.compactBytes(); // host
    r.skip(4); // port
    r.compactBytes(); // rack
    r.tags();
  }
  r.compactBytes(); // cluster_id
  r.skip(4); // controller_id
  if (r.uvarint() - 1 < 1) throw new Error('metadata answered no topic');
  const errorCode = r.int16();
  r.compactBytes(); // name
  return { errorCode, topicId: r.bytes(16).toString('hex') };
}

class Reader {
  private offset = 0;
  private readonly buffer: Buffer;

  constructor(buffer: Buffer) {
    this.buffer = buffer;
  }

  bytes(n: number): Buffer {
    if (n < 0 || this.offset + n > this.buffer.length) throw new Error('metadata answer cut short');
    const out = this.buffer.subarray(this.offset, this.offset + n);
    this.offset += n;
    return out;
  }

  skip(n: number): void {
    this.bytes(n);
  }

  int16(): number {
    return this.bytes(2).readInt16BE(0);
  }

  uvarint(): number {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const byte = this.bytes(1)[0]!;
      value |= (byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value >>> 0;
    }
    throw new Error('metadata answer has a varint too long');
  }

  /** A compact (nullable) string or bytes: length + 1 as a varint, 0 for null. */
  compactBytes(): void {
    const length = this.uvarint() - 1;
    if (length > 0) this.skip(length);
  }

  tags(): void {
    for (let n = this.uvarint(); n > 0; n--) {
      this.uvarint(); // tag
      this.skip(this.uvarint());
    }
  }
}

function uvarint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
}
