/**
 * The contract every Bus adapter passes, run against the real server by each adapter's test file.
 * See src/bus.ts for the semantics under test.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, sleep, uniqueName, waitFor } from '@gatehouse/testkit';
import {
  type Bus,
  BusUnavailableError,
  type Message,
  NotHandledError,
  type Position,
  PositionUnavailableError,
} from '../src/all.ts';

export interface ContractTarget {
  name: string;
  createBus(): Promise<Bus>;
  /** Returns a fresh topic name, created with that many partitions / shards where it matters. */
  newTopic(partitions?: number): Promise<string>;
  /** Stops and starts the real server; absent for the memory adapter. */
  stopServer?(): Promise<void>;
  startServer?(): Promise<void>;
  /** How long a live subscriber may take to see a message (polling adapters need longer). */
  deliveryTimeoutMs?: number;
  /**
   * Makes the broker drop every message of the topic up to and including `position`, with its own
   * retention mechanics (delete records, trim, purge); absent where a test cannot make that happen.
   */
  expireThrough?(topic: string, position: Position): Promise<void>;
  /** A well-formed position far beyond `position` in the same stream; absent where none can be told. */
  beyond?(position: Position): Position;
  /** Subscriptions report `liveAfter` (not on Kinesis). */
  reportsLiveAfter?: boolean;
  /**
   * Deletes the topic and everything it holds, so that the next publish makes it anew (another
   * incarnation, with another epoch); absent where the test cannot (or the adapter has no epochs).
   */
  deleteTopic?(topic: string): Promise<void>;
  /** A broadcast subscriber reading while its topic is deleted and made anew goes on in the new one. */
  followsRecreation?: boolean;
}

/** A position as made before epochs: without its `.<epoch>` suffix (position-epoch.ts). */
const withoutEpoch = (position: Position) => position.replace(/\.[0-9a-f]{8}$/, '');

const unavailable = (reason: PositionUnavailableError['reason']) => (err: unknown) => {
  assert.ok(err instanceof PositionUnavailableError, `a PositionUnavailableError, got ${String(err)}`);
  assert.equal(err.reason, reason);
  return true;
};

export function busContract(target: ContractTarget): void {
  describe(`${target.name} bus contract`, () => {
    let bus: Bus;
    const timeoutMs = target.deliveryTimeoutMs ?? 10_000;
    const received = (list: Message[], n: number, what: string) =>
      waitFor(() => list.length >= n, { timeoutMs, what: `${n} ${what} (have ${list.length})` });

    before(async () => {
      bus = await target.createBus();
    });
    after(async () => {
      await bus?.close();
    });

    it('delivers every message to every broadcast subscriber, with key, value and headers', async () => {
      const topic = await target.newTopic();
      const a: Message[] = [];
      const b: Message[] = [];
      const subA = await bus.subscribe(topic, (m) => void a.push(m));
      const subB = await bus.subscribe(topic, (m) => void b.push(m));
      const headers = bus.capabilities.headers ? { ce_type: 'greeting', 'x-n': '1' } : undefined;
      for (let i = 0; i < 10; i++)
        await bus.publish(topic, { key: `k${i % 3}`, value: `hello ${i}`, headers });
      await received(a, 10, 'messages on subscriber a');
      await received(b, 10, 'messages on subscriber b');
      assert.deepEqual(
        a.map((m) => m.value.toString()),
        Array.from({ length: 10 }, (_, i) => `hello ${i}`),
      );
      assert.equal(a[4]!.key, 'k1');
      assert.equal(a[0]!.topic, topic);
      if (headers) assert.deepEqual(a[0]!.headers, headers);
      await sleep(200);
      assert.equal(a.length, 10, 'no duplicates');
      await subA.close();
      await subB.close();
    });

    it('resolves publish with the position the subscriber sees', async () => {
      const topic = await target.newTopic();
      const got: Message[] = [];
      const sub = await bus.subscribe(topic, (m) => void got.push(m));
      const positions = [await bus.publish(topic, { value: 'a' }), await bus.publish(topic, { value: 'b' })];
      await received(got, 2, 'messages');
      assert.deepEqual(
        got.map((m) => m.position),
        positions,
      );
      assert.notEqual(positions[0], positions[1]);
      for (const p of positions) assert.match(p, /^[A-Za-z0-9._:~-]+$/, 'positions are URL-safe');
      await sub.close();
    });

    it('keeps publish order per key', async () => {
      const topic = await target.newTopic(2);
      const got: Message[] = [];
      const sub = await bus.subscribe(topic, (m) => void got.push(m));
      const keys = ['alpha', 'beta', 'gamma'];
      await Promise.all(
        keys.map(async (key) => {
          for (let i = 0; i < 15; i++) await bus.publish(topic, { key, value: `${key}:${i}` });
        }),
      );
      await received(got, 45, 'messages');
      for (const key of keys) {
        const seq = got.filter((m) => m.key === key).map((m) => Number(m.value.toString().split(':')[1]));
        assert.deepEqual(
          seq,
          [...seq].sort((x, y) => x - y),
          `order of key ${key}`,
        );
        assert.equal(seq.length, 15);
      }
      await sub.close();
    });

    it('splits messages between the members of a group, each message to exactly one', async () => {
      const topic = await target.newTopic(2);
      const group = uniqueName('group');
      const a: Message[] = [];
      const b: Message[] = [];
      const subA = await bus.subscribe(topic, (m) => void a.push(m), { group });
      const subB = await bus.subscribe(topic, (m) => void b.push(m), { group });
      let n = 0;
      for (let burst = 0; burst < 4; burst++) {
        for (let i = 0; i < 10; i++, n++) await bus.publish(topic, { key: `key-${n % 8}`, value: String(n) });
        await sleep(100);
      }
      await waitFor(() => a.length + b.length >= 40, {
        timeoutMs,
        what: `40 messages (have ${a.length + b.length})`,
      });
      await sleep(300);
      const all = [...a, ...b].map((m) => Number(m.value.toString())).sort((x, y) => x - y);
      assert.deepEqual(
        all,
        Array.from({ length: 40 }, (_, i) => i),
        'every message exactly once across the group',
      );
      assert.ok(a.length > 0 && b.length > 0, `both members got messages (a=${a.length}, b=${b.length})`);
      await subA.close();
      await subB.close();
    });

    it('hands a group member that joins later only what it has not consumed', async () => {
      const topic = await target.newTopic();
      const group = uniqueName('group');
      const first: Message[] = [];
      const sub = await bus.subscribe(topic, (m) => void first.push(m), { group });
      await bus.publish(topic, { value: 'one' });
      await received(first, 1, 'message');
      await sub.close();
      await bus.publish(topic, { value: 'two' });
      const again: Message[] = [];
      const sub2 = await bus.subscribe(topic, (m) => void again.push(m), { group });
      await received(again, 1, 'message after rejoining');
      await sleep(300);
      assert.deepEqual(
        again.map((m) => m.value.toString()),
        ['two'],
      );
      await sub2.close();
    });

    it('gives a message a closing group member could not handle to the group again', async () => {
      const topic = await target.newTopic();
      const group = uniqueName('group');
      const errors: Error[] = [];
      const onError = (err: Error) => void errors.push(err);
      const inHand = Promise.withResolvers<void>();
      const release = Promise.withResolvers<void>();
      const first: Message[] = [];
      const subA = await bus.subscribe(
        topic,
        async (m) => {
          first.push(m);
          inHand.resolve();
          await release.promise;
          throw new NotHandledError('closing with the message unfinished');
        },
        { group, onError },
      );
      await bus.publish(topic, { value: 'unfinished' });
      await received(first, 1, 'message on the first member');
      await inHand.promise;
      const closing = subA.close();
      release.resolve();
      await closing;
      const again: Message[] = [];
      const subB = await bus.subscribe(topic, (m) => void again.push(m), { group, onError });
      await bus.publish(topic, { value: 'next' });
      await received(again, 2, 'messages on the member that took over');
      await sleep(300);
      assert.deepEqual(again.map((m) => m.value.toString()).sort(), ['next', 'unfinished']);
      assert.equal(again.find((m) => m.value.toString() === 'unfinished')!.position, first[0]!.position);
      assert.equal(first.length, 1);
      assert.ok(!errors.some((e) => e instanceof NotHandledError), 'NotHandledError is not an error report');
      await subB.close();
    });

    it('delivers a message again to a group member that goes on after not handling it', async () => {
      const topic = await target.newTopic();
      const got: string[] = [];
      let refused = 0;
      const sub = await bus.subscribe(
        topic,
        (m) => {
          const value = m.value.toString();
          if (value === 'second' && refused++ === 0) throw new NotHandledError('not now');
          got.push(value);
        },
        { group: uniqueName('group'), onError: () => {} },
      );
      for (const value of ['first', 'second', 'third']) await bus.publish(topic, { key: 'k', value });
      await waitFor(() => got.length >= 3, { timeoutMs: 30_000, what: `3 messages (have ${got})` });
      await sleep(300);
      assert.equal(refused, 2, 'the refused message came once more');
      assert.deepEqual([...got].sort(), ['first', 'second', 'third']);
      await sub.close();
    });

    it('replays exactly the messages after a position, then goes on live', async (t) => {
      if (!bus.capabilities.replay) return t.skip('adapter has no replay');
      const topic = await target.newTopic();
      const positions: Position[] = [];
      for (let i = 1; i <= 5; i++) positions.push(await bus.publish(topic, { key: 'k', value: `m${i}` }));
      const got: Message[] = [];
      const sub = await bus.subscribe(topic, (m) => void got.push(m), { from: positions[1]! });
      await received(got, 3, 'replayed messages');
      await bus.publish(topic, { key: 'k', value: 'm6' });
      await received(got, 4, 'messages');
      await sleep(300);
      assert.deepEqual(
        got.map((m) => m.value.toString()),
        ['m3', 'm4', 'm5', 'm6'],
      );
      assert.deepEqual(
        got.slice(0, 3).map((m) => m.position),
        positions.slice(2),
      );
      await sub.close();
    });

    it('orders positions as the stream does and refuses malformed ones', async () => {
      const topic = await target.newTopic();
      const [a, b] = [await bus.publish(topic, { value: 'a' }), await bus.publish(topic, { value: 'b' })];
      assert.ok(bus.comparePositions(a, b) < 0);
      assert.ok(bus.comparePositions(b, a) > 0);
      assert.equal(bus.comparePositions(b, b), 0);
      assert.throws(() => bus.comparePositions('not a position!', a), unavailable('unknown'));
      await assert.rejects(
        bus.subscribe(topic, () => {}, { from: 'not a position!' }),
        unavailable('unknown'),
      );
    });

    it('refuses to replay from a position after which the broker dropped messages', async (t) => {
      if (!bus.capabilities.replay || !target.expireThrough) return t.skip('cannot expire messages here');
      const topic = await target.newTopic();
      const positions: Position[] = [];
      for (let i = 1; i <= 6; i++) positions.push(await bus.publish(topic, { value: `m${i}` }));
      await target.expireThrough(topic, positions[2]!);
      await assert.rejects(
        bus.subscribe(topic, () => {}, { from: positions[0]! }),
        unavailable('expired'),
        'm2 and m3 are gone',
      );
      const got: Message[] = [];
      const sub = await bus.subscribe(topic, (m) => void got.push(m), { from: positions[3]! });
      await bus.publish(topic, { value: 'm7' });
      await received(got, 3, 'messages after a position still held');
      await sleep(200);
      assert.deepEqual(
        got.map((m) => m.value.toString()),
        ['m5', 'm6', 'm7'],
      );
      await sub.close();
    });

    it('refuses to replay from a position beyond the end of the stream', async (t) => {
      if (!bus.capabilities.replay || !target.beyond) return t.skip('no position beyond the end can be told');
      const topic = await target.newTopic();
      const last = await bus.publish(topic, { value: 'only' });
      await assert.rejects(
        bus.subscribe(topic, () => {}, { from: target.beyond(last) }),
        unavailable('unknown'),
      );
      const sub = await bus.subscribe(topic, () => {}, { from: last });
      await sub.close();
    });

    it('tells the origin of a topic that never held a message, and replays everything from it', async (t) => {
      if (!bus.capabilities.replay) return t.skip('adapter has no replay');
      const topic = await target.newTopic();
      const first = await bus.subscribe(topic, () => {});
      const { origin, liveAfter } = first;
      await first.close();
      if (origin === undefined) return t.skip('adapter cannot tell its origin');
      assert.equal(liveAfter, undefined, 'nothing stored yet');
      assert.match(origin, /^[A-Za-z0-9._:~-]+$/, 'URL-safe');
      const positions: Position[] = [];
      for (let i = 1; i <= 3; i++) positions.push(await bus.publish(topic, { value: `m${i}` }));
      assert.ok(bus.comparePositions(origin, positions[0]!) < 0, 'before the first message');
      const got: Message[] = [];
      const sub = await bus.subscribe(topic, (m) => void got.push(m), { from: origin });
      await received(got, 3, 'every message after the origin');
      assert.deepEqual(
        got.map((m) => m.position),
        positions,
      );
      await sub.close();
    });

    it('refuses a position of the topic before it was deleted and made anew (another epoch)', async (t) => {
      if (!bus.capabilities.replay || !target.deleteTopic)
        return t.skip('the topic cannot be made anew here');
      assert.ok(bus.positionEpoch, 'an adapter whose topics can be made anew tells epochs');
      const topic = await target.newTopic();
      const old: Position[] = [];
      for (let i = 1; i <= 3; i++) old.push(await bus.publish(topic, { value: `old${i}` }));
      const epoch = bus.positionEpoch(old[2]!);
      assert.match(epoch ?? '', /^[0-9a-f]{8}$/, 'positions carry an epoch');
      await target.deleteTopic(topic);
      // More than the old topic had: its positions name places the new one has too.
      const now: Position[] = [];
      for (let i = 1; i <= 5; i++) now.push(await bus.publish(topic, { value: `new${i}` }));
      assert.notEqual(bus.positionEpoch(now[0]!), epoch, 'another epoch');
      assert.equal(bus.positionEpoch(now[4]!), bus.positionEpoch(now[0]!), 'one epoch per incarnation');
      await assert.rejects(
        bus.subscribe(topic, () => {}, { from: old[1]! }),
        unavailable('epoch'),
      );
      const fresh = await bus.subscribe(topic, () => {});
      if (fresh.origin !== undefined)
        assert.equal(bus.positionEpoch(fresh.origin), bus.positionEpoch(now[0]!));
      if (target.reportsLiveAfter) assert.equal(fresh.liveAfter, now[4], 'in the new epoch');
      await fresh.close();
      // A position made before epochs is read as before.
      const got: Message[] = [];
      const sub = await bus.subscribe(topic, (m) => void got.push(m), { from: withoutEpoch(now[2]!) });
      await received(got, 2, 'the messages after a position without an epoch');
      assert.deepEqual(
        got.map((m) => m.position),
        now.slice(3),
      );
      await sub.close();
    });

    it('has a broadcast subscriber reading across the topic made anew read it from its start, in its new epoch', async (t) => {
      if (!target.deleteTopic || !target.followsRecreation)
        return t.skip('subscribers do not follow a topic made anew here');
      assert.ok(bus.positionEpoch, 'an adapter whose topics can be made anew tells epochs');
      const topic = await target.newTopic();
      const got: Message[] = [];
      const sub = await bus.subscribe(topic, (m) => void got.push(m), { onError: () => {} });
      const old = await bus.publish(topic, { value: 'old' });
      await received(got, 1, 'the old message');
      await target.deleteTopic(topic);
      const now: Position[] = [];
      for (let i = 1; i <= 3; i++) now.push(await bus.publish(topic, { value: `new${i}` }));
      await waitFor(() => got.some((m) => m.value.toString() === 'new3'), {
        timeoutMs: 30_000,
        what: 'the new topic read',
      });
      const after = got.slice(got.findIndex((m) => m.value.toString() === 'new1'));
      assert.deepEqual(
        after.map((m) => m.value.toString()),
        ['new1', 'new2', 'new3'],
        'from its start, nothing skipped',
      );
      assert.deepEqual(
        after.map((m) => m.position),
        now,
        'in its new epoch',
      );
      assert.notEqual(bus.positionEpoch(now[0]!), bus.positionEpoch(old));
      await sub.close();
    });

    it('starts with the newest messages when asked for the last ones, then goes on live', async (t) => {
      if (!bus.capabilities.tail) return t.skip('adapter has no tail');
      const topic = await target.newTopic();
      const positions: Position[] = [];
      for (let i = 1; i <= 5; i++) positions.push(await bus.publish(topic, { value: `m${i}` }));
      const got: Message[] = [];
      const all: Message[] = [];
      const sub = await bus.subscribe(topic, (m) => void got.push(m), { last: 2 });
      const wide = await bus.subscribe(topic, (m) => void all.push(m), { last: 100 });
      assert.equal(sub.liveAfter, positions[4]);
      await bus.publish(topic, { value: 'm6' });
      await received(got, 3, 'the last two, then the live one');
      await received(all, 6, 'every message held, then the live one');
      await sleep(200);
      assert.deepEqual(
        got.map((m) => m.value.toString()),
        ['m4', 'm5', 'm6'],
      );
      assert.equal(all.length, 6);
      await sub.close();
      await wide.close();
    });

    it('tells where the live part of a broadcast subscription starts', async (t) => {
      if (!target.reportsLiveAfter) return t.skip('adapter cannot tell');
      const topic = await target.newTopic();
      const empty = await bus.subscribe(topic, () => {});
      assert.equal(empty.liveAfter, undefined, 'nothing stored yet');
      await empty.close();
      const first = await bus.publish(topic, { value: 'one' });
      const second = await bus.publish(topic, { value: 'two' });
      const sub = await bus.subscribe(topic, () => {});
      assert.equal(sub.liveAfter, second);
      await sub.close();
      if (bus.capabilities.replay) {
        const replaying = await bus.subscribe(topic, () => {}, { from: first });
        assert.equal(replaying.liveAfter, second, 'the same with a replay');
        await replaying.close();
      }
    });

    it('rejects a publish it cannot deliver', async () => {
      const topic = await target.newTopic();
      if (!target.stopServer) {
        const closed = await target.createBus();
        await closed.close();
        await assert.rejects(closed.publish(topic, { value: 'x' }));
        return;
      }
      await bus.publish(topic, { value: 'warm-up' });
      await target.stopServer();
      try {
        await assert.rejects(
          bus.publish(topic, { value: 'lost?' }),
          (err: unknown) => {
            // An outage the services answer 503 for, not a refusal.
            assert.ok(err instanceof BusUnavailableError, `a BusUnavailableError, got ${String(err)}`);
            assert.equal(err.dependency, 'bus');
            return true;
          },
          'publish while the server is down',
        );
      } finally {
        await target.startServer!();
      }
      await eventually(() => bus.publish(topic, { value: 'after restart' }), {
        what: 'publish after restart',
      });
    });

    it('keeps subscribers going after the server restarts', async (t) => {
      if (!target.stopServer) return t.skip('no server to restart');
      const topic = await target.newTopic();
      const broadcast: Message[] = [];
      const grouped: Message[] = [];
      const sub = await bus.subscribe(topic, (m) => void broadcast.push(m), { onError: () => {} });
      const gsub = await bus.subscribe(topic, (m) => void grouped.push(m), {
        group: uniqueName('group'),
        onError: () => {},
      });
      await bus.publish(topic, { value: 'before' });
      await received(broadcast, 1, 'message before restart');
      await received(grouped, 1, 'grouped message before restart');
      await target.stopServer();
      await target.startServer!();
      await eventually(() => bus.publish(topic, { value: 'after' }), { what: 'publish after restart' });
      await waitFor(() => broadcast.some((m) => m.value.toString() === 'after'), {
        timeoutMs: 60_000,
        what: 'broadcast subscriber to resume',
      });
      await waitFor(() => grouped.some((m) => m.value.toString() === 'after'), {
        timeoutMs: 60_000,
        what: 'group member to resume',
      });
      await sub.close();
      await gsub.close();
    });
  });
}
