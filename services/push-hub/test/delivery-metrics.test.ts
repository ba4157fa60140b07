/**
 * The hub's delivery health through /metrics, as the chart's dashboard and alerts read it:
 * `gw_fanout_delivery_seconds` (publish stamp → delivered here, the hub's delay behind the fan-out
 * stream) and `gw_slow_consumer_disconnects_total{transport}` (clients cut off at
 * MAX_BUFFERED_BYTES).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { publishedAtHeaders } from '@gatehouse/bus';
import { openSse, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture, subs } from './hub-fixture.ts';
import { startStalledClients } from './stalled-clients.ts';

const event = (type: string, data: unknown) =>
  JSON.stringify({ specversion: '1.0', id: crypto.randomUUID(), source: 'test', type, data });

describe('delivery metrics', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture({ MAX_BUFFERED_BYTES: String(256 * 1024), HEARTBEAT_INTERVAL: '1h' });
  });
  after(() => f.stop());

  it('times each stamped fan-out event from its publish to its delivery', async () => {
    const sse = await openSse(
      `${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'late' }])}`,
    );
    try {
      // Published 3 s ago by the publisher's clock: the hub is 3 s behind the stream.
      await f.bus.publish('gw.events', {
        value: event('late', { n: 1 }),
        headers: publishedAtHeaders(Date.now() - 3000),
      });
      // Without a stamp (another producer, a bus without headers): delivered, not timed.
      await f.bus.publish('gw.events', { value: event('late', { n: 2 }) });
      await waitFor(() => sse.events('late').length === 2, { timeoutMs: 5000, what: 'both events' });
      assert.equal(await f.metric('gw_fanout_delivery_seconds_count'), 1);
      const sum = await f.metric('gw_fanout_delivery_seconds_sum');
      assert.ok(sum >= 3 && sum < 10, `delay ${sum} s`);
      assert.equal(await f.metric('gw_fanout_delivery_seconds_bucket', 'le="2.5"'), 0);
      assert.equal(await f.metric('gw_fanout_delivery_seconds_bucket', 'le="5"'), 1);
    } finally {
      sse.close();
    }
  });

  it('counts the connections cut off as slow consumers, by transport', async () => {
    assert.equal(await f.metric('gw_slow_consumer_disconnects_total', 'transport="sse"'), 0);
    const stalled = await startStalledClients('sse', f.url, 2, [{ eventType: 'flood' }]);
    try {
      await waitFor(() => f.hub.size === 2, { timeoutMs: 5000, what: 'two stalled clients' });
      const payload = 'x'.repeat(64 * 1024);
      for (let sent = 0; f.hub.size > 0; sent++) {
        assert.ok(sent < 500, `${f.hub.size} stalled clients still connected after ${sent} events`);
        await f.publish('flood', { payload });
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.equal(await f.metric('gw_slow_consumer_disconnects_total', 'transport="sse"'), 2);
    } finally {
      await stalled.stop();
    }
  });
});
