/**
 * Routes on NATS (nats-route-subject.ts): a message published with a route stays in the topic's one
 * stream (one order of positions), and a subscriber limited to routes reads only those; changing
 * them mid-stream loses nothing and repeats nothing. The project's NATS (tools/deps.sh) is 2.10 or
 * later, whose consumers filter by several subjects: a subscriber limited to two or three routes
 * reads only those (before 2.10 the bus takes one route per subscriber).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { dependencyAddress, sleep, uniqueName, waitFor } from '@gatehouse/testkit';
import { type Message, NatsBus } from '../src/all.ts';
import { MAX_ROUTE_TOKEN } from '../src/nats-route-subject.ts';

/** A position's stream sequence, without its epoch. */
const sequenceOf = (position: string) => Number.parseInt(position, 10);

describe('nats routes', () => {
  let bus: NatsBus;
  const topics: string[] = [];
  const newTopic = () => {
    const topic = uniqueName('routes');
    topics.push(topic);
    return topic;
  };

  before(async () => {
    bus = await NatsBus.connect({ servers: dependencyAddress.natsUrl, name: 'routes-test' });
  });
  after(async () => {
    await bus?.close();
    const nc = await connect({ servers: dependencyAddress.natsUrl });
    const jsm = await jetstreamManager(nc);
    for (const t of topics) await jsm.streams.delete(t.replaceAll('.', '_')).catch(() => {});
    await nc.close();
  });

  const send = (topic: string, route: string | undefined, value: string) =>
    bus.publish(topic, { value }, route === undefined ? {} : { route });

  it('filters a subscriber by several routes (the server is NATS 2.10 or later)', () => {
    assert.ok(bus.capabilities.routes > 1, `routes per subscriber: ${bus.capabilities.routes}`);
  });

  it('limited to two routes, then three, then two, reads only those: a route added or dropped mid-stream loses and repeats nothing', async () => {
    const topic = newTopic();
    const got: Message[] = [];
    const sub = await bus.subscribe(topic, (m) => void got.push(m), { routes: new Set(['a', 'b']) });
    // Rounds of a, b, c, d; c is added at round 20, b dropped at round 50, d never wanted.
    const sent: Record<string, number[]> = { a: [], b: [], c: [], d: [] };
    let cAfter = 0;
    let bThrough = 0;
    for (let round = 0; round < 80; round++) {
      if (round === 20) cAfter = sequenceOf(sub.route!(new Set(['a', 'b', 'c'])));
      if (round === 50) bThrough = sequenceOf(sub.route!(new Set(['a', 'c'])));
      for (const route of ['a', 'b', 'c', 'd'])
        sent[route]!.push(sequenceOf(await send(topic, route, route)));
    }
    await waitFor(() => got.filter((m) => m.value.toString() === 'a').length === 80, { what: 'every a' });
    await waitFor(() => sequenceOf(got.at(-1)?.position ?? '0') === sent['c']!.at(-1), {
      what: 'the last c',
    });
    await sleep(100);
    const positions = got.map((m) => sequenceOf(m.position));
    assert.deepEqual(
      positions,
      [...positions].sort((x, y) => x - y).filter((p, i, all) => p !== all[i - 1]),
      'in stream order, none twice',
    );
    const of = (route: string) =>
      got.filter((m) => m.value.toString() === route).map((m) => sequenceOf(m.position));
    assert.deepEqual(of('a'), sent['a'], 'the route kept throughout: every message');
    assert.deepEqual(
      of('b'),
      sent['b']!.filter((p) => p <= bThrough),
      'the dropped one: every message up to the drop',
    );
    assert.deepEqual(
      of('c'),
      sent['c']!.filter((p) => p > cAfter),
      'the added one: every message after the add',
    );
    assert.ok(of('c').length >= 60, `c from round 20 on at the latest (${of('c').length})`);
    assert.deepEqual(of('d'), [], 'never wanted: never read');
    await sub.close();
  });

  it('keeps routed messages in one order that a subscriber without routes reads whole', async () => {
    const topic = newTopic();
    const got: Message[] = [];
    const sub = await bus.subscribe(topic, (m) => void got.push(m));
    const positions = [
      await send(topic, 'com.example.a', '1'),
      await send(topic, undefined, '2'),
      await send(topic, 'type with spaces.*>~é', '3'),
    ];
    await waitFor(() => got.length === 3);
    assert.deepEqual(
      got.map((m) => [m.position, m.value.toString(), m.topic]),
      positions.map((p, i) => [p, String(i + 1), topic]),
    );
    await sub.close();
  });

  it('reads only its routes and the messages without one, and after a change every message of the new ones, none twice', async () => {
    const topic = newTopic();
    const got: Message[] = [];
    const sub = await bus.subscribe(topic, (m) => void got.push(m), { routes: new Set(['a']) });
    await send(topic, 'b', 'b1');
    await send(topic, undefined, 'plain');
    await send(topic, 'a', 'a1');
    await waitFor(() => got.at(-1)?.value.toString() === 'a1');
    // A message without a route is every subscriber's (a writer that does not route yet).
    assert.deepEqual(
      got.map((m) => m.value.toString()),
      ['plain', 'a1'],
    );
    // Switched to b: b's messages after the last one delivered come (b1 was before it: not), a's stop.
    const since = sub.route!(new Set(['b']));
    assert.equal(since, got[1]!.position);
    await send(topic, 'a', 'a2');
    const b2 = await send(topic, 'b', 'b2');
    await waitFor(() => got.length === 3);
    assert.deepEqual([got[2]!.value.toString(), got[2]!.position], ['b2', b2]);
    // Every message again: what was not read since the switch comes, in order, once.
    sub.route!(undefined);
    await send(topic, 'c', 'c1');
    await waitFor(() => got.at(-1)?.value.toString() === 'c1');
    assert.deepEqual(
      got.map((m) => m.value.toString()),
      ['plain', 'a1', 'b2', 'c1'],
    );
    await sub.close();
  });

  it('a change delivers nothing more from the consumer before it, whatever that one had fetched already', async () => {
    const topic = newTopic();
    for (let n = 0; n < 50; n++) {
      await send(topic, 'a', `a${n}`);
      await send(topic, 'b', `b${n}`);
    }
    const got: string[] = [];
    let sub: Awaited<ReturnType<typeof bus.subscribe>> | undefined;
    const changed = Promise.withResolvers<void>();
    // The first message changes the routes while the batch it came in is still in hand.
    sub = await bus.subscribe(
      topic,
      (m) => {
        got.push(m.value.toString());
        if (got.length === 1) {
          sub!.route!(new Set(['b']));
          changed.resolve();
        }
      },
      { routes: new Set(['a']), last: 100 },
    );
    await changed.promise;
    await waitFor(() => got.at(-1) === 'b49', { what: 'the last b' });
    assert.deepEqual(got, ['a0', ...Array.from({ length: 50 }, (_, n) => `b${n}`)]);
    await sub.close();
  });

  it('a subscriber limited to a route too long for a subject gets its messages (it reads everything)', async () => {
    const topic = newTopic();
    const long = 'x'.repeat(MAX_ROUTE_TOKEN + 1);
    const got: string[] = [];
    const sub = await bus.subscribe(topic, (m) => void got.push(m.value.toString()), {
      routes: new Set([long]),
    });
    await send(topic, long, 'long');
    await send(topic, 'other', 'other');
    await waitFor(() => got.length === 2);
    assert.deepEqual(got, ['long', 'other']);
    await sub.close();
  });

  it("a change after a quiet spell of its routes starts at the broker's place, not at the last message delivered", async () => {
    const topic = newTopic();
    const got: string[] = [];
    const sub = await bus.subscribe(topic, (m) => void got.push(m.value.toString()), {
      routes: new Set(['a']),
    });
    await send(topic, 'a', 'a1');
    await waitFor(() => got.length === 1);
    let last = '';
    for (let n = 1; n <= 5; n++) last = await send(topic, 'b', `old b${n}`);
    // The broker read past them without a match: so has the subscriber.
    await waitFor(() => sub.readThrough!() === last, {
      what: 'the read-through position',
      timeoutMs: 15_000,
    });
    assert.equal(sub.route!(new Set(['b'])), last);
    await send(topic, 'b', 'new b');
    await waitFor(() => got.length === 2);
    assert.deepEqual(got, ['a1', 'new b'], 'the b events before the change are not read again');
    await sub.close();
  });

  it('a change made before any message is read starts where the subscription did', async () => {
    const topic = newTopic();
    await send(topic, 'a', 'old');
    const got: string[] = [];
    const sub = await bus.subscribe(topic, (m) => void got.push(m.value.toString()), { routes: new Set() });
    const since = sub.route!(new Set(['a']));
    assert.equal(since, sub.liveAfter);
    await send(topic, 'a', 'new');
    await waitFor(() => got.length === 1);
    assert.deepEqual(got, ['new']);
    await sub.close();
  });
});
