import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryStore } from '@gatehouse/store';
import { dependency, dependencyAddress, eventually, uniqueName, waitFor } from '@gatehouse/testkit';
import {
  BusError,
  KinesisBus,
  type KinesisBusOptions,
  type Message,
  PositionUnavailableError,
} from '../src/all.ts';
import { KinesisGroupState } from '../src/kinesis-group-state.ts';
import { busContract } from './bus-contract.ts';

const leaseStore = new MemoryStore();
const options: KinesisBusOptions = {
  endpoint: dependencyAddress.kinesisEndpoint,
  pollIntervalMs: 50,
  leaseStore,
  leaseTtlSeconds: 5,
};
// Creates the contract's streams with the shard count it asks for, and deletes them at the end
// (the emulator limits the shards it holds in all).
const admin = new KinesisBus(options);
const created: string[] = [];

async function newTopic(shards = 1): Promise<string> {
  const topic = uniqueName('topic');
  await admin.ensureStream(topic, shards);
  created.push(topic);
  return topic;
}

/** A position as made before epochs: without its `.<epoch>` suffix. */
const withoutEpoch = (position: string) => position.replace(/\.[0-9a-f]{8}$/, '');

after(async () => {
  await Promise.allSettled(created.map((t) => admin.deleteTopic(t)));
  await admin.close();
  await leaseStore.close();
});

busContract({
  name: 'kinesis',
  createBus: async () => new KinesisBus(options),
  newTopic,
  stopServer: () => dependency('down', 'kinesis'),
  startServer: () => dependency('up', 'kinesis'),
  deliveryTimeoutMs: 15_000,
  deleteTopic: (topic) => admin.deleteTopic(topic),
  followsRecreation: true,
});

describe('kinesis bus specifics', () => {
  let bus: KinesisBus;
  before(() => {
    bus = new KinesisBus(options);
  });
  after(() => bus.close());

  it('rejects headers instead of dropping them, and takes a message without them', async () => {
    const topic = await newTopic();
    await assert.rejects(bus.publish(topic, { value: 'x', headers: { ce_type: 't' } }), BusError);
    assert.match(await bus.publish(topic, { value: 'x', headers: {} }), /^shardId-\d+~\d+\.[0-9a-f]{8}$/);
  });

  it('reports a keyless message as keyless', async () => {
    const topic = await newTopic();
    const got: Message[] = [];
    const sub = await bus.subscribe(topic, (m) => void got.push(m));
    await bus.publish(topic, { value: 'no key' });
    await waitFor(() => got.length === 1, { what: 'the message' });
    assert.equal(got[0]!.key, undefined);
    await sub.close();
  });

  it('refuses a group without a lease store, and `from` on a group', async () => {
    const topic = await newTopic();
    const bare = new KinesisBus({ endpoint: dependencyAddress.kinesisEndpoint });
    try {
      await assert.rejects(
        bare.subscribe(topic, () => {}, { group: 'g' }),
        /leaseStore/,
      );
    } finally {
      await bare.close();
    }
    const position = await bus.publish(topic, { value: 'x' });
    await assert.rejects(
      bus.subscribe(topic, () => {}, { group: 'g', from: position }),
      BusError,
    );
  });

  it('creates a missing stream on publish only when createStreams is on', async () => {
    const strict = new KinesisBus({ ...options, createStreams: false });
    const topic = uniqueName('topic');
    try {
      await assert.rejects(strict.publish(topic, { value: 'x' }), /not found/);
      await assert.rejects(
        strict.subscribe(topic, () => {}),
        /does not exist/,
      );
      await bus.publish(topic, { value: 'x' });
      created.push(topic);
      await strict.publish(topic, { value: 'y' });
    } finally {
      await strict.close();
    }
  });

  it('keeps handling after a handler throws, reporting the error with the message', async () => {
    const topic = await newTopic();
    const handled: string[] = [];
    const errors: Array<{ err: Error; message: Message | undefined }> = [];
    const sub = await bus.subscribe(
      topic,
      (m) => {
        handled.push(m.value.toString());
        if (m.value.toString() === 'bad') throw new Error('handler failed');
      },
      { onError: (err, message) => errors.push({ err, message }) },
    );
    for (const value of ['bad', 'good']) await bus.publish(topic, { key: 'k', value });
    await waitFor(() => handled.length === 2, { what: 'both messages' });
    assert.deepEqual(handled, ['bad', 'good']);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.err.message, 'handler failed');
    assert.equal(errors[0]!.message?.value.toString(), 'bad');
    await sub.close();
  });

  it('gives a second group member a shard of its own, and the lone member all of them on leaving', async () => {
    const topic = await newTopic(2);
    const group = uniqueName('group');
    const a: Message[] = [];
    const b: Message[] = [];
    const subA = await bus.subscribe(topic, (m) => void a.push(m), { group });
    const subB = await bus.subscribe(topic, (m) => void b.push(m), { group });
    const shardsOf = (list: Message[]) => [...new Set(list.map((m) => m.position.split('~')[0]))];
    // These keys land on both shards of a 2-shard stream.
    const publishRound = async () => {
      a.length = 0;
      b.length = 0;
      for (let i = 0; i < 8; i++) await bus.publish(topic, { key: `key-${i}`, value: String(i) });
      await waitFor(() => a.length + b.length >= 8, { timeoutMs: 15_000, what: 'a round of 8 messages' });
    };
    await waitFor(
      async () => {
        await publishRound();
        return shardsOf(a).length === 1 && shardsOf(b).length === 1;
      },
      { timeoutMs: 20_000, intervalMs: 100, what: 'one shard per member' },
    );
    assert.notDeepEqual(shardsOf(a), shardsOf(b));
    await subB.close();
    await publishRound();
    assert.equal(a.length, 8, 'member a took over the shard of member b');
    await subA.close();
  });

  it('hands the shard of a member that vanished without closing to another once its lease expires', async () => {
    const topic = await newTopic();
    const group = uniqueName('group');
    const ghost = new KinesisGroupState({
      store: leaseStore,
      topic,
      group,
      leaseTtlSeconds: 1,
      checkpointTtlSeconds: 60,
    });
    await ghost.createdAt();
    await ghost.renewMember('ghost');
    assert.ok(await ghost.acquireLease('shardId-000000000000', 'ghost'));
    const got: Message[] = [];
    const sub = await bus.subscribe(topic, (m) => void got.push(m), { group });
    await bus.publish(topic, { value: 'while the ghost holds the shard' });
    await waitFor(() => got.length === 1, { timeoutMs: 10_000, what: 'the message after the lease expired' });
    await sub.close();
  });

  it('tells onError when the stream was re-created, and reads the new stream from its start', async () => {
    const topic = await newTopic();
    const errors: Record<string, string[]> = { broadcast: [], group: [] };
    const got: Record<string, string[]> = { broadcast: [], group: [] };
    const subscribe = (kind: 'broadcast' | 'group') =>
      bus.subscribe(topic, (m) => void got[kind]!.push(m.value.toString()), {
        group: kind === 'group' ? uniqueName('group') : undefined,
        onError: (err) => errors[kind]!.push(err.message),
      });
    const subs = [await subscribe('broadcast'), await subscribe('group')];
    await bus.publish(topic, { value: 'old' });
    await waitFor(() => got.broadcast!.length === 1 && got.group!.length === 1, {
      what: 'the first message',
    });
    await dependency('down', 'kinesis');
    await dependency('up', 'kinesis');
    // Two records in the new stream before anyone reads it: TRIM_HORIZON must find both.
    await eventually(() => bus.publish(topic, { value: 'new 1' }), { what: 'publish after restart' });
    await bus.publish(topic, { value: 'new 2' });
    await waitFor(() => got.broadcast!.length === 3 && got.group!.length === 3, {
      timeoutMs: 30_000,
      what: 'both messages of the new stream',
    });
    for (const kind of ['broadcast', 'group'])
      assert.ok(
        errors[kind]!.some((m) => /re-created/.test(m)),
        `${kind} subscriber reported the new stream: ${errors[kind]!.join(' | ')}`,
      );
    assert.deepEqual(got.broadcast, ['old', 'new 1', 'new 2']);
    assert.deepEqual(got.group, ['old', 'new 1', 'new 2']);
    for (const sub of subs) await sub.close();
  });

  it('refuses to replay from a position of a stream created anew since, or of a shard it lacks', async () => {
    const topic = await newTopic();
    const old = await bus.publish(topic, { value: 'old' });
    const kept = await bus.publish(topic, { value: 'kept' });
    const got: Message[] = [];
    const sub = await bus.subscribe(topic, (m) => void got.push(m), { from: old });
    await waitFor(() => got.length === 1, { what: 'the message after a position still held' });
    assert.equal(got[0]!.position, kept);
    await sub.close();
    await assert.rejects(
      bus.subscribe(topic, () => {}, { from: old.replace(/^[^~]+/, 'shardId-000000000099') }),
      (err) => err instanceof PositionUnavailableError && err.reason === 'unknown',
    );
    // Deleting and creating the stream is how the emulator loses what a stream held (its shortest
    // retention is a day): the old positions name records the new stream does not have.
    await admin.deleteTopic(topic);
    await admin.ensureStream(topic, 1);
    await assert.rejects(
      bus.subscribe(topic, () => {}, { from: old }),
      (err) => err instanceof PositionUnavailableError && err.reason === 'epoch',
      'a position of the old stream, by its epoch',
    );
    await assert.rejects(
      bus.subscribe(topic, () => {}, { from: withoutEpoch(old) }),
      (err) => err instanceof PositionUnavailableError && err.reason === 'expired',
      'a position without an epoch, by an empty new stream',
    );
    await bus.publish(topic, { value: 'new' });
    // Expired or unknown, depending on how the new stream's sequence numbers compare with the old.
    await assert.rejects(
      bus.subscribe(topic, () => {}, { from: withoutEpoch(kept) }),
      PositionUnavailableError,
      'a new stream with records of its own',
    );
  });
});
