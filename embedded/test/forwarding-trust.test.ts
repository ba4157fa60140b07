/**
 * Forwarding headers through the public edge: a client's own X-Forwarded-Proto / -For / -Host and
 * Forwarded are neither believed (the REST engine's https flag and client ip) nor passed on by the
 * proxy, unless the client is a proxy listed in TRUSTED_PROXIES, whose words are kept and appended to.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  type EmbeddedGateway,
  ephemeralGatewaySettings,
  exampleAppSettings,
  startEmbeddedGateway,
} from '../src/index.ts';

interface Echo {
  ip: string;
  https: boolean;
  headers: Record<string, string>;
}

const claims = {
  'x-forwarded-proto': 'https',
  'x-forwarded-for': '198.51.100.66',
  'x-forwarded-host': 'bank.example',
  forwarded: 'for=198.51.100.66;proto=https;host=bank.example',
  'x-real-ip': '198.51.100.66',
};

async function echoThrough(gw: EmbeddedGateway): Promise<Echo> {
  const res = await fetch(`http://127.0.0.1:${gw.publicPort}/api/echo/1`, {
    headers: { ...claims, accept: 'application/json' },
  });
  const body = await res.text();
  assert.equal(res.status, 200, body);
  return JSON.parse(body) as Echo;
}

describe('forwarding headers through the public edge', () => {
  let open: EmbeddedGateway;
  let behindProxy: EmbeddedGateway;
  before(async () => {
    open = await startEmbeddedGateway({ ...ephemeralGatewaySettings, ...exampleAppSettings });
    // The test's requests come from 127.0.0.1: here that is the trusted proxy in front.
    behindProxy = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      ...exampleAppSettings,
      TRUSTED_PROXIES: '127.0.0.1,::1',
    });
  });
  after(async () => {
    await open?.stop();
    await behindProxy?.stop();
  });

  it('does not believe or pass on a client’s own X-Forwarded-* and Forwarded', async () => {
    const echo = await echoThrough(open);
    assert.equal(echo.https, false, 'X-Forwarded-Proto: https from a client over plain HTTP');
    assert.equal(echo.ip, '127.0.0.1', 'the client is its peer address');
    const seen = JSON.stringify(echo.headers);
    assert.doesNotMatch(seen, /198\.51\.100\.66|bank\.example/, 'the claims reached the upstream');
    assert.equal(echo.headers['x-forwarded-proto'], 'http', "the proxy's own scheme");
    assert.equal(echo.headers['x-forwarded-for'], '127.0.0.1', "the proxy's own peer");
    assert.equal(echo.headers['x-real-ip'], undefined);
    assert.match(
      echo.headers['forwarded'] ?? '',
      /^for=127\.0\.0\.1;by=[^,]+;proto=http$|^for=127\.0\.0\.1;by=.*;host=.*;proto=http$/,
    );
  });

  it('believes a trusted proxy and appends to what it said', async () => {
    const echo = await echoThrough(behindProxy);
    assert.equal(echo.https, true);
    assert.equal(echo.ip, '198.51.100.66', 'the client the trusted proxy named');
    assert.equal(echo.headers['x-forwarded-for'], '198.51.100.66, 127.0.0.1');
    assert.equal(echo.headers['x-forwarded-proto'], 'https');
    assert.equal(echo.headers['x-forwarded-host'], 'bank.example');
    assert.match(
      echo.headers['forwarded'] ?? '',
      /^for=198\.51\.100\.66;proto=https;host=bank\.example, for=127\.0\.0\.1;/,
    );
  });
});
