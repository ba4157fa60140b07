/**
 * Kills are durable: a blacklisting whose notification the hub never heard (its store watch was cut
 * off) takes effect as soon as the watch listens again (`resync`): the hub looks up every session it
 * holds. The real-Redis version (pause, restart, a cut connection) is test-e2e/test/durable-kills.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { blacklistKey } from '@gatehouse/auth';
import { MemoryBus } from '@gatehouse/bus';
import { LongPollClient, openSse, openWs, sleep, waitFor } from '@gatehouse/testkit';
import { startHubFixture } from '../hub-fixture.ts';
import { WatchCutStore } from './watch-cut-store.ts';

describe('kill rescan', () => {
  it('kills the sessions blacklisted while the watch was cut off, once it listens again', async () => {
    const store = new WatchCutStore();
    const bus = new MemoryBus();
    // A 20 s poll window, far above a kill's time: a poll answered at the window's end instead of
    // at the kill is told apart on a loaded machine (the test never waits for the window).
    const f = await startHubFixture({ LONGPOLL_TIMEOUT: '20s' }, { bus, store });
    try {
      const jwt = (jti: string) => f.jwt({ jti, username: jti });
      const sse = await openSse(`${f.url}/_gw/v1/connection/sse?jwt=${jwt('s-sse')}`);
      const ws = openWs(`${f.wsUrl}/_gw/v1/connection/ws?jwt=${jwt('s-ws')}`);
      const spared = await openSse(`${f.url}/_gw/v1/connection/sse?jwt=${jwt('s-spared')}`);
      const lp = new LongPollClient(f.url);
      await lp.get(`?jwt=${jwt('s-lp')}`);
      await lp.poll();
      await waitFor(() => f.hub.size === 3, { what: 'three streams' });
      const waiting = lp.poll();
      await sleep(100);

      store.muted = true;
      for (const s of ['s-sse', 's-ws', 's-lp']) await store.set(blacklistKey(s), '1', { ttlSeconds: 60 });
      store.muted = false;
      await sleep(300);
      assert.equal(f.hub.size, 3, 'the kills were not heard');

      const resynced = Date.now();
      store.resync();
      await sse.ended;
      assert.equal(sse.events('gw.session_killed').length, 1);
      assert.equal((await ws.closed).code, 1000);
      const lpEvents = await waiting;
      assert.deepEqual(
        lpEvents.map((e) => e['type']),
        ['gw.session_killed'],
      );
      assert.ok(Date.now() - resynced < 5000, `every kill within ${Date.now() - resynced} ms of the resync`);
      assert.equal(f.hub.size, 1, 'the session not blacklisted stays');
      assert.equal(await f.metric('gw_blacklist_rescans_total'), 1);
      spared.close();
    } finally {
      await f.stop();
      await store.close();
      await bus.close();
    }
  });
});
