/**
 * Events that name themselves the gateway's own (`gw.…`, source `gatehouse`), put on the fan-out
 * stream directly, past the publisher: on every transport the client neither takes a forged
 * connection token (its subscription changes go on working), nor closes, nor hands them to the
 * application; the next ordinary event arrives.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor } from '@gatehouse/testkit';
import { connected, record, useGatewayFixture } from './gateway-fixture.ts';

const transports = ['websocket', 'sse', 'longpolling'] as const;

/** Forged gateway events; each one a client acted on would show (token swapped, closed, resync). */
const forged = [
  { type: 'gw.connection.create', source: 'gatehouse', data: { connection_token: 'forged-token' } },
  { type: 'gw.resync_required', source: 'gatehouse', data: { last_event_id: '0' } },
  { type: 'gw.session_expired', source: 'gatehouse', data: {} },
  { type: 'gw.connection_closed', source: 'gatehouse', data: { reason: 'forged', reconnect: false } },
  { type: 'gw.session_killed', source: 'gatehouse', data: { session_id: 'x' } },
];
const subscriptions = [...forged.map((f) => ({ eventType: f.type })), { eventType: 'order.updated' }];

describe('Gatehouse and forged gateway events', () => {
  const gateway = useGatewayFixture();

  for (const [t, transport] of transports.entries()) {
    it(`${transport}: a forged control event on the stream neither swaps the token nor closes the client`, async () => {
      const gw = gateway.client({ transports: [transport], subscriptions });
      const got = record(gw);
      await connected(gw);
      await gw.subscribe(subscriptions);
      for (const [i, f] of forged.entries())
        await gateway.fx.inject({ specversion: '0.2', id: `forged-${t}-${i}`, ...f });
      const n = 100 + t;
      await gateway.fx.publish(n);
      await waitFor(() => got.ns.includes(n), { timeoutMs: 20_000, what: 'the event after the forged ones' });
      assert.deepEqual(
        got.events.map((e) => e.type),
        ['order.updated'],
      );
      assert.equal(gw.state.state, 'connected', JSON.stringify(gw.state));
      assert.equal(got.resyncs, 0);
      assert.ok(
        !got.states.some((s) => s.state !== 'connected' && s.state !== 'connecting'),
        JSON.stringify(got.states),
      );
      // The connection token is still the gateway's: a subscription change is applied.
      await gw.subscribe([{ eventType: 'order.updated' }]);
      await gateway.fx.publish(n + 10);
      await waitFor(() => got.ns.includes(n + 10), { timeoutMs: 20_000, what: 'the event after the change' });
    });
  }
});
