import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import kafkajs from 'kafkajs';
import { partitionForKey } from '../src/kafka-key-partition.ts';
import type { KafkaPosition } from '../src/kafka-position.ts';
import {
  brokerRefused,
  KafkaPublishBatcher,
  type KafkaPublishBatcherOptions,
  type KafkaRecord,
  type PartitionAck,
  type PartitionedRecord,
  positionsOf,
  recordSize,
} from '../src/kafka-publish-batcher.ts';
import type { TopicLayout } from '../src/kafka-topic-layouts.ts';

// kafkajs spreads its error classes into its exports, which Node cannot see as named exports.
const {
  KafkaJSConnectionError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
} = kafkajs;

interface Request {
  topic: string;
  records: PartitionedRecord[];
  answer(): void;
  fail(err: unknown): void;
}

function refusal(): Error {
  const cause = Object.assign(new Error('This record has failed the validation on broker'), {
    type: 'INVALID_RECORD',
    code: 87,
    retriable: false,
  });
  return new KafkaJSProtocolError(cause);
}

/**
 * Partition logs that assign offsets as Kafka does (each partition's records of a request get
 * consecutive offsets), starting at 1000 so that an offset is never just an index into the batch.
 */
class FakeBroker {
  readonly requests: Request[] = [];
  readonly logs = new Map<string, string[]>();
  /** Answer every request on its own (in a microtask); otherwise the test answers. */
  autoAnswer = true;
  /** Values the broker refuses: a request holding one fails whole with a non-retriable error. */
  refuses = new Set<string>();
  maxInFlightPerTopic = 0;
  private readonly inFlight = new Map<string, number>();

  readonly send = (topic: string, records: PartitionedRecord[]): Promise<PartitionAck[]> =>
    new Promise((resolve, reject) => {
      const inFlight = (this.inFlight.get(topic) ?? 0) + 1;
      this.inFlight.set(topic, inFlight);
      this.maxInFlightPerTopic = Math.max(this.maxInFlightPerTopic, inFlight);
      const done = () => this.inFlight.set(topic, (this.inFlight.get(topic) ?? 1) - 1);
      const request: Request = {
        topic,
        records,
        answer: () => {
          done();
          if (records.some((r) => this.refuses.has(r.value.toString()))) reject(refusal());
          else resolve(this.append(topic, records));
        },
        fail: (err) => {
          done();
          reject(err);
        },
      };
      this.requests.push(request);
      if (this.autoAnswer) queueMicrotask(request.answer);
    });

  /** Where a message sent without a partition goes. */
  defaultPartition = 0;

  valueAt(topic: string, { partition, offset }: KafkaPosition): string | undefined {
    return this.log(topic, partition)[Number(offset) - 1000];
  }

  log(topic: string, partition: number): string[] {
    const key = `${topic}/${partition}`;
    if (!this.logs.has(key)) this.logs.set(key, []);
    return this.logs.get(key)!;
  }

  sizes(): number[] {
    return this.requests.map((r) => r.records.length);
  }

  private append(topic: string, records: PartitionedRecord[]): PartitionAck[] {
    const acks = new Map<number, PartitionAck>();
    for (const r of records) {
      const partition = r.partition ?? this.defaultPartition;
      const log = this.log(topic, partition);
      if (!acks.has(partition)) acks.set(partition, { partition, baseOffset: String(1000 + log.length) });
      log.push(r.value.toString());
    }
    return [...acks.values()];
  }
}

function setup(
  options: Partial<KafkaPublishBatcherOptions> & { partitionCount?: number; available?: number[] } = {},
) {
  const broker = new FakeBroker();
  const partitionCount = options.partitionCount ?? 1;
  const layout: TopicLayout = {
    partitionCount,
    available: options.available ?? Array.from({ length: partitionCount }, (_, i) => i),
  };
  const stale: string[] = [];
  const batcher = new KafkaPublishBatcher({
    send: broker.send,
    layout: async () => layout,
    layoutStale: (topic) => void stale.push(topic),
    ...options,
  });
  return { broker, batcher, stale };
}

const record = (value: string, key: string | null = null): KafkaRecord => ({
  key,
  value: Buffer.from(value),
});

describe('kafka publish batcher', () => {
  it('sends a lone publish at once, with no timer waiting for more', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'setImmediate'] });
    const { broker, batcher } = setup();
    // With every timer frozen, this only settles if nothing waits for one.
    const position = await batcher.publish('t', record('a'));
    assert.deepEqual(broker.sizes(), [1]);
    assert.equal(broker.valueAt('t', position), 'a');
  });

  it('sends the publishes of one tick in one request, in publish order', async () => {
    const { broker, batcher } = setup();
    const values = ['a', 'b', 'c', 'd', 'e'];
    const positions = await Promise.all(values.map((v) => batcher.publish('t', record(v))));
    assert.deepEqual(broker.sizes(), [5]);
    assert.deepEqual(broker.log('t', 0), values);
    assert.deepEqual(
      positions.map((p) => p.offset),
      [1000n, 1001n, 1002n, 1003n, 1004n],
    );
  });

  it('queues publishes made while the topic has a request in flight for its next request', async () => {
    const { broker, batcher } = setup();
    broker.autoAnswer = false;
    const first = batcher.publish('t', record('a'));
    await tick();
    const later = ['b', 'c', 'd'].map((v) => batcher.publish('t', record(v)));
    const other = batcher.publish('u', record('x'));
    await tick();
    assert.deepEqual(
      broker.requests.map((r) => [r.topic, r.records.length]),
      [
        ['t', 1],
        ['u', 1],
      ],
      'another topic is not held up; this one waits for its request',
    );
    broker.requests[0]!.answer();
    await first;
    await tick();
    assert.deepEqual(
      broker.requests[2]!.records.map((r) => r.value.toString()),
      ['b', 'c', 'd'],
    );
    broker.requests[2]!.answer();
    broker.requests[1]!.answer();
    await Promise.all([...later, other]);
    assert.equal(broker.maxInFlightPerTopic, 1);
  });

  it('caps a request at maxMessages and maxBytes; a message larger than maxBytes goes alone', async () => {
    const capped = setup({ maxMessages: 2 });
    await Promise.all(['a', 'b', 'c', 'd', 'e'].map((v) => capped.batcher.publish('t', record(v))));
    assert.deepEqual(capped.broker.sizes(), [2, 2, 1]);

    const small = 'x'.repeat(100);
    const sized = setup({ maxBytes: 2 * recordSize(record(small)) });
    const big = 'y'.repeat(1_000);
    await Promise.all([small, small, small, big, small].map((v) => sized.batcher.publish('t', record(v))));
    assert.deepEqual(sized.broker.sizes(), [2, 1, 1, 1]);
    assert.equal(sized.broker.requests[2]!.records[0]!.value.toString(), big);
  });

  it('resolves every publish with the position the broker stored it at', async () => {
    const { broker, batcher } = setup({ partitionCount: 3 });
    const published: { value: string; key: string | null; position: Promise<KafkaPosition> }[] = [];
    for (let burst = 0; burst < 6; burst++) {
      for (let i = 0; i < 10; i++) {
        const value = `m${burst}-${i}`;
        const key = i % 4 === 3 ? null : `k${(burst + i) % 7}`;
        published.push({ value, key, position: batcher.publish('t', record(value, key)) });
      }
      if (burst % 2 === 0) await tick();
    }
    const settled = await Promise.all(published.map(async (p) => ({ ...p, position: await p.position })));
    assert.ok(broker.requests.length < published.length, 'publishes were batched');
    for (const { value, key, position } of settled) {
      assert.equal(
        broker.valueAt('t', position),
        value,
        `${value} at ${position.partition}-${position.offset}`,
      );
      if (key !== null) assert.equal(position.partition, partitionForKey(key, 3), `partition of ${key}`);
    }
    const keyless = new Set(settled.filter((p) => p.key === null).map((p) => p.position.partition));
    assert.ok(keyless.size > 1, 'keyless messages spread over partitions');
  });

  it('sends keyless messages round-robin over the partitions that have a leader', async () => {
    const { broker, batcher } = setup({ partitionCount: 3, available: [0, 2] });
    await Promise.all(Array.from({ length: 6 }, (_, i) => batcher.publish('t', record(`v${i}`))));
    const partitions = broker.requests[0]!.records.map((r) => r.partition);
    assert.deepEqual(
      partitions.filter((_, i) => i % 2 === 0),
      Array(3).fill(partitions[0]),
    );
    assert.deepEqual([...new Set(partitions)].sort(), [0, 2]);

    const leaderless = setup({ partitionCount: 3, available: [] });
    await Promise.all(Array.from({ length: 6 }, (_, i) => leaderless.batcher.publish('t', record(`v${i}`))));
    assert.equal(new Set(leaderless.broker.requests[0]!.records.map((r) => r.partition)).size, 3);
  });

  it('keeps publish order per key within and across requests', async () => {
    const { broker, batcher } = setup({ partitionCount: 2, maxMessages: 4 });
    const keys = ['alpha', 'beta', 'gamma'];
    await Promise.all([
      ...keys.map(async (key) => {
        for (let i = 0; i < 20; i++) await batcher.publish('t', record(`${key}:${i}`, key));
      }),
      ...keys.map((key) =>
        Promise.all(
          Array.from({ length: 20 }, (_, i) => batcher.publish('t', record(`${key}:burst${i}`, key))),
        ),
      ),
    ]);
    assert.equal(broker.maxInFlightPerTopic, 1);
    for (const key of keys) {
      const stored = broker.log('t', partitionForKey(key, 2)).filter((v) => v.startsWith(`${key}:`));
      const awaited = stored.filter((v) => !v.includes('burst'));
      const burst = stored.filter((v) => v.includes('burst'));
      assert.deepEqual(
        awaited,
        Array.from({ length: 20 }, (_, i) => `${key}:${i}`),
      );
      assert.deepEqual(
        burst,
        Array.from({ length: 20 }, (_, i) => `${key}:burst${i}`),
      );
    }
  });

  it('rejects a request the broker could not be reached for, with the publishes queued behind it', async () => {
    const { broker, batcher, stale } = setup();
    broker.autoAnswer = false;
    const first = batcher.publish('t', record('a'));
    await tick();
    const queued = [batcher.publish('t', record('b')), batcher.publish('t', record('c'))];
    const down = new KafkaJSNumberOfRetriesExceeded(
      new KafkaJSConnectionError('Connection error: ECONNREFUSED'),
      {
        retryCount: 5,
        retryTime: 2_000,
      },
    );
    broker.requests[0]!.fail(down);
    const results = await Promise.allSettled([first, ...queued]);
    assert.deepEqual(
      results.map((r) => r.status === 'rejected' && r.reason === down),
      [true, true, true],
    );
    assert.equal(broker.requests.length, 1, 'the queued publishes were not sent');
    assert.deepEqual(stale, ['t']);

    broker.autoAnswer = true;
    const after = await batcher.publish('t', record('d'));
    assert.equal(broker.valueAt('t', after), 'd');
  });

  it('sends a refused request again one message at a time, so only the refused message fails', async () => {
    const { broker, batcher, stale } = setup();
    broker.refuses.add('bad');
    const results = await Promise.allSettled(['a', 'bad', 'c'].map((v) => batcher.publish('t', record(v))));
    assert.deepEqual(broker.sizes(), [3, 1, 1, 1]);
    assert.deepEqual(
      results.map((r) => (r.status === 'rejected' ? brokerRefused(r.reason) : r.status)),
      ['fulfilled', true, 'fulfilled'],
    );
    assert.deepEqual(broker.log('t', 0), ['a', 'c']);
    for (const r of results) if (r.status === 'fulfilled') assert.ok(broker.valueAt('t', r.value));
    assert.ok(stale.length >= 1);
  });

  it('sends to a topic that does not exist yet one message at a time, placed by kafkajs, until it does', async () => {
    const broker = new FakeBroker();
    broker.defaultPartition = 1;
    let exists = false;
    const batcher = new KafkaPublishBatcher({
      send: async (topic, records) => {
        const acks = await broker.send(topic, records);
        exists = true; // the broker created it on the first produce request
        return acks;
      },
      layout: async () => (exists ? { partitionCount: 2, available: [0, 1] } : undefined),
      layoutStale: () => {},
    });
    const first = await Promise.all(['a', 'b', 'c'].map((v) => batcher.publish('t', record(v, 'k'))));
    const later = await Promise.all(['d', 'e'].map((v) => batcher.publish('t', record(v, 'k'))));
    assert.deepEqual(broker.sizes(), [1, 1, 1, 2]);
    assert.equal(broker.requests[0]!.records[0]!.partition, undefined, 'kafkajs places the first one');
    assert.equal(broker.requests[1]!.records[0]!.partition, partitionForKey('k', 2));
    assert.deepEqual(first[0], { partition: 1, offset: 1000n });
    for (const [i, position] of [...first, ...later].entries())
      assert.equal(broker.valueAt('t', position), 'abcde'[i]);
  });

  it('rejects the publishes of a request whose topic layout cannot be read', async () => {
    const stale: string[] = [];
    const broker = new FakeBroker();
    const batcher = new KafkaPublishBatcher({
      send: broker.send,
      layout: async () => {
        throw new Error('metadata request failed');
      },
      layoutStale: (topic) => void stale.push(topic),
    });
    await assert.rejects(batcher.publish('t', record('a')), /metadata request failed/);
    assert.equal(broker.requests.length, 0);
  });

  it('settles once every publish made so far is resolved or rejected', async () => {
    const { broker, batcher } = setup();
    broker.autoAnswer = false;
    const publish = batcher.publish('t', record('a'));
    let settled = false;
    const done = batcher.settled().then(() => {
      settled = true;
    });
    await tick();
    assert.equal(settled, false);
    broker.requests[0]!.answer();
    await done;
    await publish;
    await batcher.settled();
  });
});

describe('kafka publish positions', () => {
  it("adds each record's index among its partition's records to that partition's base offset", () => {
    const positions = positionsOf(
      [0, 1, 0, 2, 0].map((partition) => ({ partition })),
      [
        { partition: 0, baseOffset: '10' },
        { partition: 2, baseOffset: '9007199254740993' },
        { partition: 1, baseOffset: '7' },
      ],
    );
    assert.deepEqual(positions, [
      { partition: 0, offset: 10n },
      { partition: 1, offset: 7n },
      { partition: 0, offset: 11n },
      { partition: 2, offset: 9007199254740993n },
      { partition: 0, offset: 12n },
    ]);
  });

  it('gives an error for a record whose partition the answer lacks', () => {
    const [position] = positionsOf([{ partition: 3 }], [{ partition: 0, baseOffset: '1' }]);
    assert.ok(position instanceof Error);
    assert.match(position.message, /no offset for partition 3/);
  });
});

describe('kafka record size', () => {
  // kafkajs' own encoder of a v2 record: the estimate must never be below what goes on the wire.
  const encodeRecord = createRequire(import.meta.url)(
    'kafkajs/src/protocol/recordBatch/record/v0/index.js',
  ) as (record: object) => { size(): number };

  it('is an upper bound of the encoded record, however large the offset and timestamp deltas', () => {
    const cases: KafkaRecord[] = [
      record(''),
      record('x'.repeat(300), 'a-key'),
      { key: 'ключ', value: Buffer.alloc(70_000), headers: { ce_type: 'greeting', 'x-ü': 'ü'.repeat(200) } },
    ];
    for (const r of cases) {
      const encoded = encodeRecord({
        offsetDelta: 2 ** 31 - 1,
        timestampDelta: Number.MAX_SAFE_INTEGER,
        key: r.key === null ? null : Buffer.from(r.key),
        value: r.value,
        headers: r.headers ?? {},
      });
      assert.ok(encoded.size() <= recordSize(r), `${encoded.size()} ≤ ${recordSize(r)}`);
      assert.ok(recordSize(r) - encoded.size() <= 40, 'and not far above it');
    }
  });
});

describe('broker refused', () => {
  it('is a non-retriable protocol error, also when kafkajs wrapped it', () => {
    assert.equal(brokerRefused(refusal()), true);
    const wrapped = new KafkaJSNonRetriableError('wrapped');
    Object.defineProperty(wrapped, 'cause', { value: refusal() });
    assert.equal(brokerRefused(wrapped), true);
  });

  it('is not a broker that could not be reached or an error worth retrying', () => {
    const leaderMoved = new KafkaJSProtocolError(
      Object.assign(new Error('not the leader'), { type: 'NOT_LEADER_FOR_PARTITION', retriable: true }),
    );
    assert.equal(
      brokerRefused(new KafkaJSNumberOfRetriesExceeded(leaderMoved, { retryCount: 5, retryTime: 2_000 })),
      false,
    );
    assert.equal(brokerRefused(new KafkaJSConnectionError('ECONNREFUSED')), false);
    assert.equal(brokerRefused(new Error('boom')), false);
    assert.equal(brokerRefused('text'), false);
  });
});
