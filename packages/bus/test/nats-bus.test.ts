import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type JetStreamManager, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { dependency, dependencyAddress, sleep, uniqueName, waitFor } from '@gatehouse/testkit';
import { type Message, NatsBus } from '../src/all.ts';
import { busContract } from './bus-contract.ts';

const createBus = () => NatsBus.connect({ servers: dependencyAddress.natsUrl, name: 'bus-contract' });
/** Streams made by these tests, deleted at the end so repeated runs do not pile them up. */
const topics: string[] = [];
const newTopic = (prefix = 'topic') => {
  const topic = uniqueName(prefix);
  topics.push(topic);
  return topic;
};

/** Deletes the topic's stream: the next publish makes it anew, with another `created` time. */
async function deleteStream(topic: string): Promise<void> {
  const nc = await connect({ servers: dependencyAddress.natsUrl });
  try {
    await (await jetstreamManager(nc)).streams.delete(topic.replaceAll('.', '_'));
  } finally {
    await nc.close();
  }
}

/** A purge up to (not including) the next sequence: what the stream's limits do to old messages. */
async function purgeThrough(topic: string, position: string): Promise<void> {
  const nc = await connect({ servers: dependencyAddress.natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.purge(topic.replaceAll('.', '_'), { seq: Number.parseInt(position, 10) + 1 });
  } finally {
    await nc.close();
  }
}

busContract({
  name: 'nats',
  createBus,
  newTopic: async () => newTopic(),
  stopServer: () => dependency('down', 'nats'),
  startServer: () => dependency('up', 'nats'),
  expireThrough: purgeThrough,
  beyond: (position) => {
    const [sequence, epoch] = position.split('.');
    return `${Number(sequence) + 1000}.${epoch}`;
  },
  reportsLiveAfter: true,
  deleteTopic: deleteStream,
  followsRecreation: true,
});

after(async () => {
  const nc = await connect({ servers: dependencyAddress.natsUrl });
  const jsm = await jetstreamManager(nc);
  for (const topic of topics) await jsm.streams.delete(topic.replaceAll('.', '_')).catch(() => {});
  await nc.close();
});

describe('nats bus specifics', () => {
  let bus: NatsBus;
  let nc: NatsConnection;
  let jsm: JetStreamManager;

  before(async () => {
    bus = await createBus();
    nc = await connect({ servers: dependencyAddress.natsUrl });
    jsm = await jetstreamManager(nc);
  });
  after(async () => {
    await bus?.close();
    await nc?.close();
  });

  it('keeps a dotted topic in a stream whose name NATS accepts, with the key out of the headers', async () => {
    const topic = `gw.${uniqueName('events')}`;
    topics.push(topic);
    const got: Message[] = [];
    const sub = await bus.subscribe(topic, (m) => void got.push(m));
    const position = await bus.publish(topic, { key: 'k', value: 'v', headers: { a: 'b' } });
    await waitFor(() => got.length === 1, { what: 'the message' });
    assert.equal(got[0]!.position, position);
    assert.equal(got[0]!.key, 'k');
    assert.deepEqual(got[0]!.headers, { a: 'b' });
    const info = await jsm.streams.info(topic.replaceAll('.', '_'));
    assert.deepEqual(info.config.subjects, [topic]);
    assert.equal(info.config.storage, 'file');
    await sub.close();
  });

  it('goes on with the next message when a handler throws, reporting the error', async () => {
    const topic = newTopic();
    const handled: string[] = [];
    const errors: string[] = [];
    const sub = await bus.subscribe(
      topic,
      (m) => {
        if (m.value.toString() === 'bad') throw new Error('boom');
        handled.push(m.value.toString());
      },
      { onError: (err, m) => errors.push(`${err.message}:${m?.value.toString()}`) },
    );
    for (const value of ['a', 'bad', 'b']) await bus.publish(topic, { value });
    await waitFor(() => handled.length === 2, { what: 'both good messages' });
    assert.deepEqual(handled, ['a', 'b']);
    assert.deepEqual(errors, ['boom:bad']);
    await sub.close();
  });

  it('rejects topics that are not literal subjects', async () => {
    await assert.rejects(bus.publish('orders.*', { value: 'x' }), /not a valid NATS subject/);
    await assert.rejects(bus.publish('a..b', { value: 'x' }), /not a valid NATS subject/);
  });

  it('reads a core NATS subject with { core: true }, splitting a queue group', async () => {
    const base = uniqueName('legacy');
    const subject = `${base}.orders`;
    const plain: Message[] = [];
    const a: Message[] = [];
    const b: Message[] = [];
    const subs = [
      await bus.subscribe(`${base}.>`, (m) => void plain.push(m), { core: true }),
      await bus.subscribe(subject, (m) => void a.push(m), { core: true, group: 'q' }),
      await bus.subscribe(subject, (m) => void b.push(m), { core: true, group: 'q' }),
    ];
    for (let i = 0; i < 20; i++) nc.publish(subject, `m${i}`);
    await nc.flush();
    await waitFor(() => plain.length === 20 && a.length + b.length === 20, { what: 'core messages' });
    assert.equal(plain[0]!.topic, subject);
    assert.deepEqual(
      plain.map((m) => m.value.toString()),
      Array.from({ length: 20 }, (_, i) => `m${i}`),
    );
    await Promise.all(subs.map((s) => s.close()));
  });

  it('opens the group consumer again when it is deleted under its members', async () => {
    const topic = newTopic();
    const group = uniqueName('group');
    const got: string[] = [];
    const errors: string[] = [];
    const sub = await bus.subscribe(topic, (m) => void got.push(m.value.toString()), {
      group,
      onError: (err) => errors.push(err.message),
    });
    await bus.publish(topic, { value: 'before' });
    await waitFor(() => got.length === 1, { what: 'the first message' });
    await jsm.consumers.delete(topic, group);
    // The consumer comes back delivering what is new from then on, so keep publishing until it is there.
    for (let i = 0; !got.some((v) => v.startsWith('after')); i++) {
      assert.ok(i < 40, 'group resumed within 10 s');
      await bus.publish(topic, { value: `after ${i}` });
      await sleep(250);
    }
    assert.ok(
      errors.some((e) => /consumer_deleted|consumer_not_found/.test(e)),
      `reported: ${errors.join('; ')}`,
    );
    await sub.close();
  });

  it('reads a stream deleted and created again from its start', async () => {
    const topic = newTopic();
    const got: Message[] = [];
    const sub = await bus.subscribe(topic, (m) => void got.push(m), { onError: () => {} });
    await bus.publish(topic, { value: 'old' });
    await waitFor(() => got.length === 1, { what: 'the first message' });
    await jsm.streams.delete(topic);
    const made = await bus.publish(topic, { value: 'new' });
    assert.match(made, /^1\.[0-9a-f]{8}$/, 'publish created the stream again');
    await waitFor(() => got.length === 2, { what: 'the message on the new stream' });
    assert.deepEqual(
      got.map((m) => `${m.position.split('.')[0]}:${m.value}`),
      ['1:old', '1:new'],
    );
    assert.equal(got[1]!.position, made);
    assert.notEqual(bus.positionEpoch(got[0]!.position), bus.positionEpoch(made), 'another epoch');
    await sub.close();
  });

  it('answers ping while connected and rejects once closed', async () => {
    const other = await createBus();
    await other.ping();
    await other.close();
    await assert.rejects(other.ping(), /closed/);
    await assert.rejects(other.publish(newTopic(), { value: 'x' }), /closed/);
  });
});
