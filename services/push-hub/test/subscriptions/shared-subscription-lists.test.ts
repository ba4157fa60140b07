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
import { SharedSubscriptionLists } from '../../src/subscriptions/index.ts';
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
  it('takes 0 to 100,000 lists of at most 16,383 bytes of text; 1,000 of 1 KiB by default', () => {
    const config = loadConfig(pushHubConfig, {});
    assert.equal(config.SHARED_SUBSCRIPTION_LISTS, 1000);
    assert.equal(config.SHARED_SUBSCRIPTION_LIST_BYTES, 1024);
    assert.equal(
      loadConfig(pushHubConfig, { SHARED_SUBSCRIPTION_LIST_BYTES: '16383' }).SHARED_SUBSCRIPTION_LIST_BYTES,
      16383,
    );
    // V8 hashes a string of 16,384 characters or more by its length alone: texts of one such length
    // all collide in the map, and a connect with one compared itself with every kept text of its
    // length (about 10 ms per connect with 1,000 kept texts of 16,400 characters padded with spaces).
    for (const env of [
      { SHARED_SUBSCRIPTION_LISTS: '-1' },
      { SHARED_SUBSCRIPTION_LISTS: '100001' },
      { SHARED_SUBSCRIPTION_LIST_BYTES: '16384' },
    ])
      assert.throws(() => loadConfig(pushHubConfig, env), ConfigError, JSON.stringify(env));
  });

  it('keeps no text of 16,384 characters or more, whatever its bounds say', () => {
    const lists = new SharedSubscriptionLists({ maxLists: 10, maxTextBytes: 64 * 1024 });
    const text = (pad: number) => `[{"eventType":"a"}${' '.repeat(pad)}]`;
    const list = [{ eventType: 'a', oneOf: [] }];
    lists.keep(text(16383 - text(0).length), list);
    assert.equal(lists.size, 1, 'a text of 16,383 characters is kept');
    lists.keep(text(16384 - text(0).length), list);
    lists.keep(text(20000), list);
    assert.equal(lists.size, 1, 'longer ones are not');
  });
});
