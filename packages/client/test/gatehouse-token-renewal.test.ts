/**
 * A token function's next JWT renews the open connection in place: before the JWT the connection
 * was admitted with expires, the client asks for a new one and hands it to the gateway with its
 * subscriptions (which moves the connection's end to the new JWT's), so a session outlives many
 * tokens without a `reconnecting (session expired)` per token. Over WebSocket and SSE; a long-poll
 * connection's poll token ends with the JWT it was made with, so long-polling renews at the
 * reconnect that ends it (gatehouse-session.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sleep, waitFor } from '@gatehouse/testkit';
import { connected, jwt, range, record, useGatewayFixture } from './gateway-fixture.ts';

const subscriptions = [{ eventType: 'order.updated' }];

describe('Gatehouse token renewal', () => {
  const gateway = useGatewayFixture();

  for (const transport of ['websocket', 'sse'] as const) {
    it(`${transport}: 3 s tokens for 10 s: renewed in place, never a reconnect, every event`, async () => {
      let calls = 0;
      const gw = gateway.client({
        transports: [transport],
        subscriptions,
        token: () => jwt({ jti: `renewed-${transport}-${++calls}` }, 3),
      });
      const got = record(gw);
      await connected(gw);
      const base = 30_000 + 1000 * transport.length;
      for (let n = base + 1; n <= base + 40; n++) {
        await gateway.fx.publish(n);
        await sleep(250);
      }
      await waitFor(() => got.ns.length >= 40, {
        timeoutMs: 20_000,
        what: `40 events (got ${got.ns.length})`,
      });
      assert.deepEqual(got.ns, range(base + 1, base + 40));
      assert.ok(calls >= 4, `the token function was asked ${calls} times over 10 s of 3 s tokens`);
      assert.deepEqual(
        got.states.filter((s) => s.state === 'reconnecting' || s.state === 'closed'),
        [],
        'the connection was made again',
      );
      gw.close();
    });
  }
});
