/**
 * Acknowledgements through two hubs ("replicas"), each with its own connection to one real Redis
 * store (a namespace of the run), on one memory bus: acks of shuffled positions sent at once through
 * both never leave the position behind the greatest acknowledged (the Lua compareAndSet between
 * real concurrent writers), a burst of first acks of a new session counts one session, and a
 * connect with the session on either starts right after it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { RedisStore } from '@gatehouse/store/redis';
import { dependencyAddress, openSse, uniqueName, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture, subs } from '../hub-fixture.ts';

describe('acknowledgements through two replicas on Redis', () => {
  const namespace = `${uniqueName('ack-redis')}:`;
  const bus = new MemoryBus();
  const stores: RedisStore[] = [];
  const hubs: HubFixture[] = [];
  const positions: string[] = [];

  before(async () => {
    for (const replica of ['a', 'b']) {
      const store = await RedisStore.connect({ url: dependencyAddress.redisUrl, namespace });
      stores.push(store);
      hubs.push(
        await startHubFixture(
          { REPLICA_ID: replica, ACK_REQUESTS_PER_MINUTE: '10000', ACK_MAX_SESSIONS_PER_SUBJECT: '13' },
          { bus, store },
        ),
      );
    }
    for (let n = 0; n < 50; n++) positions.push(await hubs[0]!.publish('greeting', { name: 'x', n }));
  });
  after(async () => {
    for (const h of hubs) await h.stop();
    for (const s of stores) {
      for (const k of await s.keys('')) await s.delete(k);
      await s.close();
    }
    await bus.close();
  });

  it('never moves the position backwards under concurrent acks, and a connect on either starts after it', async () => {
    const jwt = hubs[0]!.jwt({ sub: 'redis-reader' });
    const ack = (i: number, session: string, position: string) =>
      fetch(`${hubs[i % 2]!.url}/_gw/v1/ack`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
        body: JSON.stringify({ session, position }),
      });
    const stored = async (session: string) => {
      const keys = await stores[1]!.keys('gw:ack:');
      return stores[1]!.get(keys.find((k) => k.endsWith(`:${session}`))!);
    };
    // Each round a new session, so that every ack of it may move it: shuffled positions at once. The
    // subject's 13 sessions are exactly ACK_MAX_SESSIONS_PER_SUBJECT: a burst of first acks of one
    // name counts it once.
    let greatest = -1;
    for (let round = 0; round < 12; round++) {
      const picks = Array.from({ length: 48 }, (_, i) => (i * 29 + round * 11) % 48);
      const session = `race-${round}`;
      const answers = await Promise.all(picks.map((p, i) => ack(i, session, positions[p]!)));
      for (const res of answers) assert.equal(res.status, 204, await res.text());
      assert.equal(await stored(session), positions[47], `round ${round}: the greatest`);
    }
    // Then one session moved on over rounds.
    for (let round = 0; round < 4; round++) {
      const picks = Array.from({ length: 20 }, (_, i) => Math.min(44, round * 10 + ((i * 7) % 20)));
      const answers = await Promise.all(picks.map((p, i) => ack(i, 'inbox', positions[p]!)));
      for (const res of answers) assert.equal(res.status, 204, await res.text());
      greatest = Math.max(greatest, ...picks);
      assert.equal(await stored('inbox'), positions[greatest], `inbox after round ${round}`);
    }
    const greetings = subs([{ eventType: 'greeting', oneOf: [] }]);
    for (const hub of hubs) {
      const sse = await openSse(
        `${hub.url}/_gw/v1/connection/sse?subscriptions=${greetings}&jwt=${jwt}&ackSession=inbox`,
      );
      const expected = Array.from({ length: 49 - greatest }, (_, i) => greatest + 1 + i);
      await waitFor(() => sse.events('greeting').length >= expected.length, {
        what: 'the events after the acked one',
      });
      assert.deepEqual(
        sse.events('greeting').map((e) => (e['data'] as { n: number }).n),
        expected,
      );
      sse.close();
    }
  });
});
