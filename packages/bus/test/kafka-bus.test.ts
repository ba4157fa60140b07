import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { after, before, describe, it } from 'node:test';
import {
  dependency,
  dependencyAddress,
  exitAfterFileWhenHung,
  sleep,
  uniqueName,
  waitFor,
} from '@gatehouse/testkit';
import { Kafka, logLevel, type PartitionMetadata, Partitioners } from 'kafkajs';
import { BusError, KafkaBus, type Message, PositionUnavailableError } from '../src/all.ts';
import { formatKafkaPosition, parseKafkaPosition } from '../src/kafka-position.ts';
import { busContract } from './bus-contract.ts';

const createBus = async () => new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: 'bus-test' });

/** Without a partition count the topic is left to the broker's auto-creation (one partition). */
async function newTopic(partitions?: number): Promise<string> {
  const topic = uniqueName('topic');
  if (partitions !== undefined) {
    const bus = await createBus();
    try {
      assert.equal(await bus.ensureTopic(topic, partitions), true);
    } finally {
      await bus.close();
    }
  }
  return topic;
}

// kafkajs can leave a reconnect timer behind after the broker-restart cases (seen once in CI).
after(() => exitAfterFileWhenHung());

/** Moves the partition's log start offset past `position`, as retention deleting segments would. */
async function deleteRecordsThrough(topic: string, position: string): Promise<void> {
  const { partition, offset } = parseKafkaPosition(position);
  const admin = new Kafka({ brokers: dependencyAddress.kafkaBrokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await admin.fetchTopicMetadata({ topics: [topic] }); // deleteTopicRecords needs it loaded
    await admin.deleteTopicRecords({ topic, partitions: [{ partition, offset: String(offset + 1n) }] });
  } finally {
    await admin.disconnect();
  }
}

busContract({
  name: 'kafka',
  createBus,
  newTopic,
  stopServer: () => dependency('down', 'kafka'),
  startServer: () => dependency('up', 'kafka'),
  expireThrough: deleteRecordsThrough,
  beyond: (position) => {
    const { partition, offset, epoch } = parseKafkaPosition(position);
    return formatKafkaPosition(partition, offset + 1000n, epoch);
  },
  reportsLiveAfter: true,
});

describe('kafka bus specifics', () => {
  let bus: KafkaBus;
  before(async () => {
    bus = await createBus();
  });
  after(async () => {
    await bus?.close();
  });

  it('replays only the partition of the position on a multi-partition topic, the others from their end', async () => {
    const topic = await newTopic(2);
    const published: { value: string; position: string }[] = [];
    for (let i = 0; i < 12; i++) {
      const value = `old-${i}`;
      published.push({ value, position: await bus.publish(topic, { key: `k${i}`, value }) });
    }
    const partitionOf = (position: string) => position.split('-')[0];
    const from = published[0]!.position;
    const samePartition = published.filter((p) => partitionOf(p.position) === partitionOf(from));
    assert.ok(samePartition.length < published.length, 'the keys spread over both partitions');
    const got: Message[] = [];
    const sub = await bus.subscribe(topic, (m) => void got.push(m), { from });
    const replayed = samePartition.slice(1).map((p) => p.value);
    await waitFor(() => got.length >= replayed.length, { what: `${replayed.length} replayed messages` });
    for (let i = 0; i < 6; i++) await bus.publish(topic, { key: `k${i}`, value: `new-${i}` });
    await waitFor(() => got.length >= replayed.length + 6, { what: 'live messages' });
    await sleep(300);
    const values = got.map((m) => m.value.toString());
    assert.deepEqual(
      values.filter((v) => v.startsWith('old-')),
      replayed,
    );
    assert.deepEqual(values.filter((v) => v.startsWith('new-')).sort(), [
      'new-0',
      'new-1',
      'new-2',
      'new-3',
      'new-4',
      'new-5',
    ]);
    await sub.close();
  });

  it('resolves publishes sent together with the positions the subscriber sees, keys where kafkajs puts them', async () => {
    const topic = await newTopic(3);
    const got: Message[] = [];
    const sub = await bus.subscribe(topic, (m) => void got.push(m));
    const published = await Promise.all(
      Array.from({ length: 300 }, async (_, i) => {
        const key = i % 5 === 0 ? undefined : `key-${i % 17}`;
        const value = `m${i}`;
        return { key, value, position: await bus.publish(topic, { key, value }) };
      }),
    );
    await waitFor(() => got.length >= published.length, { what: `${published.length} messages` });
    const seen = new Map(got.map((m) => [m.value.toString(), m.position]));
    for (const p of published) assert.equal(seen.get(p.value), p.position, p.value);

    const partitionMetadata: PartitionMetadata[] = [0, 1, 2].map((partitionId) => ({
      partitionErrorCode: 0,
      partitionId,
      leader: 1,
      replicas: [1],
      isr: [1],
    }));
    const kafkajs = Partitioners.DefaultPartitioner();
    const partitionOf = (position: string) => Number(position.split('-')[0]);
    for (const { key, value, position } of published.filter((p) => p.key !== undefined))
      assert.equal(
        partitionOf(position),
        kafkajs({ topic, partitionMetadata, message: { key, value } }),
        key,
      );
    const keyless = new Set(published.filter((p) => p.key === undefined).map((p) => partitionOf(p.position)));
    assert.equal(keyless.size, 3, 'keyless messages go round-robin');
    for (let k = 0; k < 17; k++) {
      const order = got.filter((m) => m.key === `key-${k}`).map((m) => Number(m.value.toString().slice(1)));
      assert.deepEqual(
        order,
        [...order].sort((a, b) => a - b),
        `order of key-${k}`,
      );
    }
    await sub.close();
  });

  it('publishes to a topic that does not exist yet, many at once, and resolves each with its position', async () => {
    const topic = await newTopic();
    const values = Array.from({ length: 30 }, (_, i) => `v${i}`);
    const positions = await Promise.all(values.map((value) => bus.publish(topic, { key: 'one', value })));
    const got: Message[] = [];
    const sub = await bus.subscribe(topic, (m) => void got.push(m), { from: positions[0]! });
    await waitFor(() => got.length >= values.length - 1, { what: 'the replayed messages' });
    assert.deepEqual(
      got.map((m) => [m.value.toString(), m.position]),
      values.slice(1).map((value, i) => [value, positions[i + 1]]),
    );
    await sub.close();
  });

  it('rejects positions that are malformed, name no partition, or come with a group', async () => {
    const topic = await newTopic(1);
    const ignore = () => {};
    await assert.rejects(bus.subscribe(topic, ignore, { from: 'abc' }), BusError);
    await assert.rejects(bus.subscribe(topic, ignore, { from: '7-0' }), /names no partition/);
    await assert.rejects(bus.subscribe(topic, ignore, { from: '0-0', group: 'g' }), BusError);
  });

  it('gives positions the epoch of the topic, and refuses one of a topic since deleted and created anew', async () => {
    const topic = await newTopic(1);
    const old = [await bus.publish(topic, { value: 'a' }), await bus.publish(topic, { value: 'b' })];
    const epoch = bus.positionEpoch(old[0]!);
    assert.match(epoch ?? '', /^[0-9a-f]{8}$/);
    await bus.deleteTopic(topic);
    assert.equal(await bus.ensureTopic(topic, 1), true);
    const now = [];
    for (const value of ['c', 'd', 'e']) now.push(await bus.publish(topic, { value }));
    assert.notEqual(bus.positionEpoch(now[0]!), epoch, 'a new topic id');
    await assert.rejects(
      bus.subscribe(topic, () => {}, { from: old[0]! }),
      (err: unknown) => err instanceof PositionUnavailableError && err.reason === 'epoch',
    );
    // A position without an epoch (made before them) is replayed from as before.
    const got: string[] = [];
    const { partition, offset } = parseKafkaPosition(now[0]!);
    const sub = await bus.subscribe(topic, (m) => void got.push(m.value.toString()), {
      from: formatKafkaPosition(partition, offset),
    });
    await waitFor(() => got.length === 2, { what: 'the messages after an epoch-less position' });
    assert.deepEqual(got, ['d', 'e']);
    await sub.close();
    await bus.deleteTopic(topic);
  });

  it('hands handler errors to onError and goes on with the next message', async () => {
    const topic = await newTopic();
    const errors: { err: Error; message: Message | undefined }[] = [];
    const got: string[] = [];
    const handler = (m: Message) => {
      if (m.value.toString() === 'bad') throw new Error('handler failed');
      got.push(m.value.toString());
    };
    const onError = (err: Error, message?: Message) => void errors.push({ err, message });
    const sub = await bus.subscribe(topic, handler, { onError });
    const gsub = await bus.subscribe(topic, handler, { onError, group: uniqueName('group') });
    for (const value of ['bad', 'good']) await bus.publish(topic, { value });
    await waitFor(() => got.length >= 2 && errors.length >= 2, {
      what: 'both subscribers past the bad message',
    });
    assert.deepEqual(got, ['good', 'good']);
    assert.deepEqual(
      errors.map((e) => [e.err.message, e.message?.value.toString()]),
      [
        ['handler failed', 'bad'],
        ['handler failed', 'bad'],
      ],
    );
    await sub.close();
    await gsub.close();
  });

  it('connects, publishes and consumes without handing a timer a negative delay (Node 24 warns)', async () => {
    const negative: string[] = [];
    const onWarning = (w: Error) => void (w.name === 'TimeoutNegativeWarning' && negative.push(w.message));
    process.on('warning', onWarning);
    try {
      const fresh = await createBus();
      const topic = await newTopic(1);
      const got: string[] = [];
      const sub = await fresh.subscribe(topic, (m) => void got.push(m.value.toString()), {
        group: uniqueName('group'),
      });
      await fresh.publish(topic, { value: 'one' });
      await waitFor(() => got.length === 1, { what: 'the message' });
      await sub.close();
      await fresh.close();
      await sleep(50); // warnings are emitted on a later tick
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(negative, []);
  });

  it('leaves the event loop asleep while an idle subscription waits (no 1 ms timer loop: kafkajs #1556)', async () => {
    const fresh = await createBus();
    const topic = await newTopic(1);
    const sub = await fresh.subscribe(topic, () => {});
    await sleep(500); // past the join's flurry of requests
    let timers = 0;
    const hook = createHook({ init: (_id, type) => void (type === 'Timeout' && timers++) });
    hook.enable();
    await sleep(2_000);
    hook.disable();
    await sub.close();
    await fresh.close();
    // An idle consumer makes a fetch per max wait (1 s) and a heartbeat a second: a few timers
    // each. kafkajs' request queue re-armed a 1 ms timer per connection for ever (2,000 here).
    assert.ok(timers < 200, `${timers} timers in 2 s of an idle subscription`);
  });

  it('creates a topic that several replicas ensure at once, each call resolving', async () => {
    const buses = await Promise.all(Array.from({ length: 4 }, () => createBus()));
    try {
      for (let round = 0; round < 5; round++) {
        const topic = uniqueName('contended');
        const created = await Promise.all(buses.map((b) => b.ensureTopic(topic, 2)));
        assert.ok(created.includes(true), `one call created ${topic}: ${created}`);
        assert.equal(await bus.ensureTopic(topic, 2), false, 'it exists afterwards');
      }
    } finally {
      await Promise.all(buses.map((b) => b.close()));
    }
  });

  it('answers ping and leaves an existing topic alone', async () => {
    await bus.ping();
    const topic = await newTopic(3);
    assert.equal(await bus.ensureTopic(topic, 1), false);
  });

  it('rejects everything once closed', async () => {
    const closed = await createBus();
    await closed.close();
    await assert.rejects(closed.publish('any', { value: 'x' }), BusError);
    await assert.rejects(closed.ping(), BusError);
  });
});
