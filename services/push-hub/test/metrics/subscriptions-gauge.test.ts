/**
 * `gw_subscriptions` on /metrics: the subscriptions of the streams this replica holds open,
 * following connects, a subscription change and closes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openSse, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture, subs } from '../hub-fixture.ts';

describe('gw_subscriptions', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture({});
  });
  after(() => f.stop());

  const gauge = () => f.metric('gw_subscriptions');
  const settlesAt = (n: number) =>
    waitFor(async () => (await gauge()) === n, { what: `gw_subscriptions at ${n}` }).catch(async (err) => {
      throw new Error(`${(err as Error).message}; it is ${await gauge()}`);
    });

  it('counts the subscriptions of every connection, changed and closed ones too', async () => {
    assert.equal(await gauge(), 0);
    const two = await openSse(
      `${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'a' }, { eventType: 'b' }])}`,
    );
    let one: Awaited<ReturnType<typeof openSse>> | undefined;
    try {
      await settlesAt(2);
      one = await openSse(`${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'c' }])}`);
      await settlesAt(3);
      await waitFor(() => two.frames.length >= 2);
      const token = (two.events('gw.connection.create')[0]!['data'] as { connection_token: string })
        .connection_token;
      const changed = await fetch(`${f.url}/_gw/v1/connection/sse/${token}/subscriptions`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ subscriptions: [{ eventType: 'x' }, { eventType: 'y' }, { eventType: 'z' }] }),
      });
      assert.equal(changed.status, 204, await changed.text());
      await settlesAt(4);
      two.close();
      await settlesAt(1);
    } finally {
      two.close();
      one?.close();
    }
  });
});
