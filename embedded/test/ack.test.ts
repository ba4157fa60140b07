/**
 * Acknowledged delivery at the embedded gateway's public edge, as a browser uses it: the CORS
 * preflight of `POST /_gw/v1/ack` from an allowed origin, the ack itself with a Bearer JWT, and a
 * connect with `ackSession` that starts right after the acknowledged event.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signJwt, withExpiry } from '@gatehouse/auth';
import { openSse, waitFor } from '@gatehouse/testkit';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '../src/index.ts';

const key = 'ack-test-secret-of-sufficient-length';
const origin = 'https://app.example';
const jwt = signJwt(withExpiry({ sub: 'edge-reader', iss: 'ack-test' }), { alg: 'HS256', key });

describe('acknowledged delivery at the public edge', () => {
  let gw: EmbeddedGateway;
  let edge: string;

  before(async () => {
    gw = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      JWT_SECRET_KEY: key,
      CORS_ALLOWED_ORIGINS: origin,
    });
    edge = `http://127.0.0.1:${gw.publicPort}`;
  });
  after(() => gw?.stop());

  it('answers the preflight, takes the ack, and a connect with the session starts after it', async () => {
    const subscriptions = encodeURIComponent(JSON.stringify([{ eventType: 'note', oneOf: [] }]));
    const first = await openSse(`${edge}/_gw/v1/connection/sse?subscriptions=${subscriptions}`);
    for (let n = 0; n < 4; n++) {
      const res = await fetch(`${edge}/_gw/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          specversion: '1.0',
          source: 'ack-test',
          id: `n-${n}`,
          type: 'note',
          data: { n },
        }),
      });
      assert.equal(res.status, 202, await res.text());
    }
    await waitFor(() => first.events('note').length === 4, { what: 'the events' });
    const positions = first.frames.filter((f) => f.event === 'note').map((f) => f.id!);
    first.close();

    const preflight = await fetch(`${edge}/_gw/v1/ack`, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    assert.ok(preflight.status < 300, `preflight ${preflight.status}`);
    assert.equal(preflight.headers.get('access-control-allow-origin'), origin);
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);

    const ack = await fetch(`${edge}/_gw/v1/ack`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
      body: JSON.stringify({ session: 'inbox', position: positions[1] }),
    });
    assert.equal(ack.status, 204, await ack.text());
    assert.equal(ack.headers.get('access-control-allow-origin'), origin);

    const resumed = await openSse(
      `${edge}/_gw/v1/connection/sse?subscriptions=${subscriptions}&jwt=${jwt}&ackSession=inbox`,
    );
    await waitFor(() => resumed.events('note').length === 2, { what: 'the events after the acked one' });
    assert.deepEqual(
      resumed.events('note').map((e) => (e['data'] as { n: number }).n),
      [2, 3],
    );
    resumed.close();
  });
});
