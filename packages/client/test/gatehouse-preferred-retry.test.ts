/**
 * On a fallback transport the client tries its preferred one again now and then. Behind a proxy
 * that holds WebSocket upgrades for ever, that try must not cost the working SSE connection: the
 * client opens the preferred transport beside it and changes over only once the gateway answers
 * on it, so delivery goes on and the state stays `connected` over `sse` throughout.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sleep, waitFor } from '@gatehouse/testkit';
import { connected, range, record, useGatewayFixture } from './gateway-fixture.ts';

const subscriptions = [{ eventType: 'order.updated' }];

describe('Gatehouse retrying its preferred transport', () => {
  const gateway = useGatewayFixture();

  it('keeps delivering over SSE while a WebSocket upgrade hangs, then changes over once WebSocket answers', async () => {
    const upgrade = /^GET [^\r\n]*\r\n(?:[^\r\n]+\r\n)*upgrade: websocket/im;
    gateway.fx.proxy.hung.add(upgrade);
    const gw = gateway.client({
      transports: ['websocket', 'sse'],
      subscriptions,
      openTimeoutMs: 1500,
      retryPreferredAfterMs: 1000,
    });
    const got = record(gw);
    await waitFor(() => gw.transport === 'sse', { timeoutMs: 20_000, what: 'the fallback to SSE' });
    const from = got.states.length;
    // Three tries of the preferred transport, each hanging for the whole open time-out.
    for (const n of range(1, 30)) {
      await gateway.fx.publish(n);
      await sleep(200);
    }
    await waitFor(() => got.ns.length === 30, {
      timeoutMs: 10_000,
      what: `30 events (got ${got.ns.length})`,
    });
    assert.deepEqual(got.ns, range(1, 30));
    assert.deepEqual(got.states.slice(from), [], 'the state left connected over SSE');
    assert.equal(gw.transport, 'sse');

    gateway.fx.proxy.hung.delete(upgrade);
    await waitFor(() => gw.transport === 'websocket', { timeoutMs: 10_000, what: 'the change to WebSocket' });
    await connected(gw);
    for (const n of range(31, 35)) await gateway.fx.publish(n);
    await waitFor(() => got.ns.length === 35, { timeoutMs: 10_000, what: 'the events after the change' });
    await sleep(300);
    assert.deepEqual(got.ns, range(1, 35), 'every event once, in order, across the change');
    assert.deepEqual(
      got.states.slice(from),
      [{ state: 'connected', transport: 'websocket' }],
      'straight from SSE to WebSocket',
    );
    gw.close();
  });
});
