/**
 * Connections that send the same subscription-list text share one checked list
 * (SHARED_SUBSCRIPTION_LISTS): what each connection holds, gets and is told stays its own. A change
 * of one reaches no other, a JWT's subscriptions still join the list, a refused text is refused on
 * every connect, and the settings are bounded. Run on a hub that keeps lists, one that keeps a single
 * list (every other text pushes the last out) and one that keeps none: the same answers on each.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '@gatehouse/service-kit';
import { openSse, type SseConnection, waitFor } from '@gatehouse/testkit';
import { pushHubConfig } from '../../src/config.ts';
import { type HubFixture, startHubFixture, subs } from '../hub-fixture.ts';

const list = [
  { eventType: 'greeting', oneOf: [{ name: 'ann' }] },
  { eventType: 'shared-a' },
  { eventType: 'shared-a' },
];
const effective = [
  { eventType: 'greeting', oneOf: [{ name: 'ann' }] },
  { eventType: 'shared-a', oneOf: [] },
];

const settings: Record<string, Record<string, string>> = {
  'lists kept (default)': {},
  'one list kept': { SHARED_SUBSCRIPTION_LISTS: '1' },
  'no list kept': { SHARED_SUBSCRIPTION_LISTS: '0' },
};

for (const [name, env] of Object.entries(settings)) {
  describe(`shared subscription lists, ${name}`, () => {
    let f: HubFixture;
    before(async () => {
      f = await startHubFixture(env);
    });
    after(() => f.stop());

    async function connect(query: string): Promise<{ sse: SseConnection; token: string }> {
      const sse = await openSse(`${f.url}/_gw/v1/connection/sse${query}`);
      await waitFor(() => sse.events('gw.subscriptions_set').length === 1, { what: 'the welcome pair' });
      const created = sse.events('gw.connection.create')[0]!['data'] as { connection_token: string };
      return { sse, token: created.connection_token };
    }

    /** The types of the events it got from the stream (not the hub's own), once `marker` came. */
    async function typesGot(sse: SseConnection, marker: string): Promise<string[]> {
      await waitFor(() => sse.events(marker).length === 1, { what: marker });
      return sse.frames.map((fr) => fr.event ?? '').filter((t) => !t.startsWith('gw.'));
    }

    it('keeps what each connection of one text holds its own: a change of one reaches no other', async (t) => {
      const first = await connect(`?subscriptions=${subs(list)}`);
      const second = await connect(`?subscriptions=${subs(list)}`);
      t.after(() => {
        first.sse.close();
        second.sse.close();
      });
      for (const c of [first, second])
        assert.deepEqual(c.sse.events('gw.subscriptions_set')[0]!['data'], effective);
      const put = await fetch(`${f.url}/_gw/v1/connection/sse/${first.token}/subscriptions`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ subscriptions: [{ eventType: 'shared-b' }, { eventType: 'marker' }] }),
      });
      assert.equal(put.status, 204, await put.text());
      await waitFor(() => first.sse.events('gw.subscriptions_set').length === 2, { what: 'the change' });
      const third = await connect(`?subscriptions=${subs(list)}`);
      t.after(() => third.sse.close());
      assert.deepEqual(third.sse.events('gw.subscriptions_set')[0]!['data'], effective);

      await f.publish('greeting', { name: 'ann' });
      await f.publish('greeting', { name: 'bob' });
      await f.publish('shared-b', {});
      await f.publish('shared-a', {});
      await f.publish('marker', {});
      assert.deepEqual(await typesGot(first.sse, 'marker'), ['shared-b', 'marker']);
      await waitFor(() => third.sse.events('shared-a').length === 1, { what: 'shared-a' });
      for (const c of [second, third])
        assert.deepEqual(
          c.sse.frames.map((fr) => fr.event).filter((e) => !e?.startsWith('gw.')),
          ['greeting', 'shared-a'],
        );
      assert.deepEqual(second.sse.events('greeting')[0]!['data'], { name: 'ann' });
    });

    it("adds a JWT's subscriptions to a text connected with before, and the next connect without it has the list alone", async (t) => {
      const plain = await connect(`?subscriptions=${subs(list)}`);
      const withJwt = await connect(`?jwt=${f.jwt({ username: 'cid' })}&subscriptions=${subs(list)}`);
      const again = await connect(`?subscriptions=${subs(list)}`);
      t.after(() => {
        for (const c of [plain, withJwt, again]) c.sse.close();
      });
      assert.deepEqual(withJwt.sse.events('gw.subscriptions_set')[0]!['data'], [
        { eventType: 'greeting', oneOf: [{ name: 'cid' }] },
        ...effective,
      ]);
      for (const c of [plain, again])
        assert.deepEqual(c.sse.events('gw.subscriptions_set')[0]!['data'], effective);
    });

    it('refuses a bad text on every connect, also after a good one was kept', async () => {
      const bad = [{ eventType: 'greeting', oneOf: [{ unknown_field: 1 }] }];
      const good = await connect(`?subscriptions=${subs(list)}`);
      good.sse.close();
      for (let i = 0; i < 2; i++) {
        const res = await fetch(`${f.url}/_gw/v1/connection/sse?subscriptions=${subs(bad)}`);
        assert.equal(res.status, 400);
        assert.match(await res.text(), /^invalid subscriptions: /);
      }
    });
  });
}

describe('shared subscription list settings', () => {
  it('takes 0 to 100,000 lists of at most 32 KiB of text; 1,000 of 1 KiB by default', () => {
    const config = loadConfig(pushHubConfig, {});
    assert.equal(config.SHARED_SUBSCRIPTION_LISTS, 1000);
    assert.equal(config.SHARED_SUBSCRIPTION_LIST_BYTES, 1024);
    for (const env of [
      { SHARED_SUBSCRIPTION_LISTS: '-1' },
      { SHARED_SUBSCRIPTION_LISTS: '100001' },
      { SHARED_SUBSCRIPTION_LIST_BYTES: '32769' },
    ])
      assert.throws(() => loadConfig(pushHubConfig, env), ConfigError, JSON.stringify(env));
  });
});
