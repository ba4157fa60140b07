/**
 * Liveness on every transport: a connection that dies without a FIN or a RST (a NAT that forgot
 * it, a laptop that slept) is noticed by the client within `idleTimeoutMs` and made again, resuming,
 * so an event published meanwhile still arrives. The gateway keeps a live connection talking: SSE
 * heartbeat comments, long-poll answers, and over WebSocket a heartbeat frame the client asks for
 * (a browser sees no WebSocket pings).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sleep, waitFor } from '@gatehouse/testkit';
import { connected, record, useGatewayFixture } from './gateway-fixture.ts';

const subscriptions = [{ eventType: 'order.updated' }];
const idleTimeoutMs = 3000;

describe('Gatehouse liveness', () => {
  // Heartbeats every 500 ms and long polls answered within a second: a live connection is never idle
  // for 3 s.
  const gateway = useGatewayFixture({ HEARTBEAT_INTERVAL: '500ms' });

  for (const transport of ['websocket', 'sse', 'longpolling'] as const) {
    it(`${transport}: a live idle connection stays; a silenced one is dropped within idleTimeoutMs and made again, resuming`, async () => {
      const gw = gateway.client({ transports: [transport], subscriptions, idleTimeoutMs });
      const got = record(gw);
      await connected(gw);
      await gw.subscribe(subscriptions);
      const n0 = 70_000 + 100 * transport.length;
      await gateway.fx.publish(n0);
      await waitFor(() => got.ns.length === 1, { timeoutMs: 20_000, what: 'the first event' });

      // Idle but alive for twice the idle time-out: no reconnect.
      await sleep(2 * idleTimeoutMs);
      assert.deepEqual(
        got.states.filter((s) => s.state === 'reconnecting'),
        [],
        'a live connection was dropped',
      );

      gateway.fx.proxy.silence();
      const silencedAt = Date.now();
      await gateway.fx.publish(n0 + 1);
      await waitFor(() => got.ns.length === 2, {
        timeoutMs: 4 * idleTimeoutMs,
        what: `the event published after the silence (states: ${JSON.stringify(got.states.slice(-3))})`,
      });
      const back = Date.now() - silencedAt;
      assert.ok(back >= idleTimeoutMs * 0.5, `back after ${back} ms: the silence did not hold`);
      assert.deepEqual(got.ns, [n0, n0 + 1]);
      assert.ok(
        got.states.some(
          (s) => s.state === 'reconnecting' && s.code === 'idle' && /nothing received/.test(s.reason),
        ),
        JSON.stringify(got.states),
      );
      gw.close();
    });
  }
});
