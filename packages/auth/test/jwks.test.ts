import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, it, mock } from 'node:test';
import { waitFor } from '@gatehouse/testkit';
import {
  JwksKeySource,
  type JwksKeySourceOptions,
  type JwtError,
  JwtVerifier,
  signJwt,
} from '../src/index.ts';
import { type RsaPair, rsaPair } from './fixtures.ts';

/**
 * jose's remote key set reads Date.now for its cooldown, so the tests that move time move Date
 * itself (timers, and so fetch time-outs, stay real).
 */
function mockClock(): { advance(ms: number): void } {
  mock.timers.enable({ apis: ['Date'], now: Date.UTC(2025, 0, 1) });
  return { advance: (ms) => mock.timers.tick(ms) };
}

/** A local identity provider whose key set the test rotates. */
class JwksServer {
  requests = 0;
  status = 200;
  headers: Record<string, string> = {};
  body: unknown = { keys: [] };
  private readonly server: Server;

  constructor() {
    this.server = createServer((_req, res) => {
      this.requests++;
      res.writeHead(this.status, { 'content-type': 'application/json', ...this.headers });
      res.end(typeof this.body === 'string' ? this.body : JSON.stringify(this.body));
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/.well-known/jwks.json`;
  }

  serve(...keys: Record<string, unknown>[]): void {
    this.body = { keys };
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function jwk(
  pair: RsaPair,
  kid: string | undefined,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    ...pair.publicKey.export({ format: 'jwk' }),
    ...(kid !== undefined && { kid }),
    use: 'sig',
    ...extra,
  };
}

const keyA = rsaPair();
const keyB = rsaPair();

describe('JWKS key source', () => {
  let server: JwksServer;
  let source: JwksKeySource | undefined;
  const errors: Error[] = [];

  async function setUp(options: Partial<JwksKeySourceOptions> = {}) {
    server = new JwksServer();
    const url = await server.listen();
    errors.length = 0;
    source = new JwksKeySource({ url, refreshIntervalMs: 0, onError: (err) => errors.push(err), ...options });
    const verifier = new JwtVerifier({ keys: [source], algorithms: ['RS256', 'PS256'] });
    return { source, verifier };
  }

  afterEach(async () => {
    mock.timers.reset();
    await source?.close();
    source = undefined;
    await server.close();
  });

  const token = (pair: RsaPair, kid?: string, claims: Record<string, unknown> = { sub: 'alice' }) =>
    signJwt(claims, { alg: 'RS256', key: pair.privateKey, ...(kid !== undefined && { kid }) });

  it('verifies tokens with the key their kid names', async () => {
    const { source, verifier } = await setUp();
    server.serve(jwk(keyA, 'a'), jwk(keyB, 'b'));
    await source.start();
    assert.equal(source.size, 2);
    assert.deepEqual(await verifier.verify(token(keyA, 'a')), { sub: 'alice' });
    assert.deepEqual(await verifier.verify(token(keyB, 'b')), { sub: 'alice' });
    await assert.rejects(verifier.verify(token(keyA, 'b')), { message: 'invalid signature' });
  });

  it('fetches again on an unknown kid, so a rotated-in key works without waiting for the refresh', async () => {
    const clock = mockClock();
    const { source, verifier } = await setUp();
    server.serve(jwk(keyA, 'a'));
    await source.start();
    assert.equal(server.requests, 1);
    server.serve(jwk(keyA, 'a'), jwk(keyB, 'b'));
    clock.advance(10_000); // the least time between fetches (default 10 s)
    assert.ok(await verifier.verify(token(keyB, 'b')));
    assert.equal(server.requests, 2);
  });

  it('fetches for unknown kids at most once per interval', async () => {
    const clock = mockClock();
    const { source, verifier } = await setUp({ minRefetchIntervalMs: 10_000 });
    server.serve(jwk(keyA, 'a'));
    await source.start();
    clock.advance(10_000);
    const forged = (kid: string) => token(keyB, kid);
    const results = await Promise.allSettled(
      [forged('x1'), forged('x2'), forged('x3')].map((t) => verifier.verify(t)),
    );
    assert.equal(server.requests, 2, 'concurrent unknown kids share one fetch');
    for (const r of results) assert.equal(r.status, 'rejected');
    const err = (results[0] as PromiseRejectedResult).reason as JwtError;
    assert.equal(err.message, 'unknown key id "x1"');
    assert.equal(err.code, 'unknown_key');
    for (let i = 0; i < 20; i++) await assert.rejects(verifier.verify(forged(`y${i}`)), /unknown key id/);
    assert.equal(server.requests, 2, 'no fetch within the interval');
    clock.advance(10_000);
    await assert.rejects(verifier.verify(forged('z')), /unknown key id/);
    assert.equal(server.requests, 3);
  });

  it('stops accepting tokens of a key rotated out, even cached ones', async () => {
    const clock = mockClock();
    const { source, verifier } = await setUp();
    server.serve(jwk(keyA, 'a'));
    await source.start();
    const old = token(keyA, 'a');
    assert.ok(await verifier.verify(old));
    assert.ok(await verifier.verify(old));
    assert.equal(verifier.stats().signatureChecks, 1, 'cached');
    server.serve(jwk(keyB, 'b'));
    clock.advance(10_000);
    assert.ok(await verifier.verify(token(keyB, 'b')), 'rotation fetched through the unknown kid b');
    await assert.rejects(verifier.verify(old), { message: 'unknown key id "a"' });
  });

  it('refreshes periodically without any token asking', async () => {
    const { source } = await setUp({ refreshIntervalMs: 50 });
    server.serve(jwk(keyA, 'a'));
    await source.start();
    const generation = source.generation;
    server.serve(jwk(keyB, 'b'));
    await waitFor(() => source.generation > generation, { timeoutMs: 5_000, what: 'periodic refresh' });
    assert.equal(source.candidates('b').length, 1);
    assert.equal(source.candidates('a').length, 0);
  });

  it('does not count an unchanged key set as a change', async () => {
    const clock = mockClock();
    const { source, verifier } = await setUp();
    server.serve(jwk(keyA, 'a'));
    await source.start();
    const generation = source.generation;
    const cached = token(keyA, 'a');
    await verifier.verify(cached);
    clock.advance(10_000);
    assert.equal(await source.refresh(), false);
    assert.equal(server.requests, 2);
    assert.equal(source.generation, generation);
    await verifier.verify(cached);
    assert.equal(verifier.stats().signatureChecks, 1, 'the cache survived');
  });

  it('keeps serving the old keys while the provider fails', async () => {
    const clock = mockClock();
    const { source, verifier } = await setUp();
    server.serve(jwk(keyA, 'a'));
    await source.start();
    for (const [status, body] of [
      [500, 'oops'],
      [200, 'not json'],
      [200, { nokeys: true }],
      [200, { keys: [{ kty: 'EC', crv: 'P-256', kid: 'ec' }] }],
    ] as const) {
      server.status = status;
      server.body = body;
      clock.advance(10_000);
      assert.equal(await source.refresh(), false);
      assert.ok(
        await verifier.verify(token(keyA, 'a', { n: status })),
        `still verifying after ${JSON.stringify(body)}`,
      );
    }
    assert.ok(errors.some((e) => /HTTP 500/.test(e.message)));
    assert.ok(errors.some((e) => /not JSON/.test(e.message)));
    assert.ok(errors.some((e) => /no "keys" array/.test(e.message)));
    assert.ok(errors.some((e) => /no usable signing key/.test(e.message)));
  });

  it('skips keys it cannot use and keeps the others', async () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
    const short = rsaPair(1024);
    const { source, verifier } = await setUp();
    server.serve(
      { ...ec, kid: 'ec' },
      jwk(keyB, 'enc', { use: 'enc' }),
      jwk(short, 'short'),
      jwk(keyB, 'es', { alg: 'ES256' }),
      jwk(keyA, 'a'),
    );
    await source.start();
    assert.equal(source.size, 1);
    assert.ok(await verifier.verify(token(keyA, 'a')));
    assert.equal(errors.length, 4);
    assert.ok(errors.some((e) => /too short/.test(e.message)));
    assert.ok(errors.some((e) => /key use enc/.test(e.message)));
  });

  it('honours the alg a key is published for', async () => {
    const { source, verifier } = await setUp();
    server.serve(jwk(keyA, 'a', { alg: 'PS256' }));
    await source.start();
    await assert.rejects(verifier.verify(token(keyA, 'a')), {
      message: 'algorithm RS256 cannot be used with a key made for another algorithm',
    });
    assert.ok(await verifier.verify(signJwt({}, { alg: 'PS256', key: keyA.privateKey, kid: 'a' })));
  });

  it('uses the keys of the set for a token without kid', async () => {
    const { source, verifier } = await setUp();
    server.serve(jwk(keyA, undefined), jwk(keyB, 'b'));
    await source.start();
    assert.ok(await verifier.verify(token(keyA)));
    assert.ok(await verifier.verify(token(keyB)));
  });

  it('rejects start when the first fetch fails, and recovers later', async () => {
    const clock = mockClock();
    const { source, verifier } = await setUp();
    server.status = 503;
    await assert.rejects(source.start(), /HTTP 503/);
    for (let i = 0; i < 5; i++)
      await assert.rejects(verifier.verify(token(keyA, 'a', { i })), { message: 'unknown key id "a"' });
    assert.equal(server.requests, 1, 'a failed fetch is not tried again within the interval');
    server.status = 200;
    server.serve(jwk(keyA, 'a'));
    clock.advance(10_000);
    assert.ok(await verifier.verify(token(keyA, 'a')));
  });

  it('does not follow a redirect, so an https key set cannot be moved to plain http', async () => {
    const { source, verifier } = await setUp();
    const keys = new JwksServer();
    keys.serve(jwk(keyA, 'a'));
    const moved = await keys.listen();
    server.status = 302;
    server.headers = { location: moved };
    try {
      await assert.rejects(source.start(), /HTTP 302 \(redirects are not followed\)/);
      assert.equal(keys.requests, 0);
      await assert.rejects(verifier.verify(token(keyA, 'a')), { message: 'unknown key id "a"' });
    } finally {
      await keys.close();
    }
  });

  it('gives up on a provider that does not answer', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    server = new JwksServer();
    const slow = new JwksKeySource({
      url: `http://127.0.0.1:${port}/jwks`,
      refreshIntervalMs: 0,
      timeoutMs: 200,
    });
    const started = Date.now();
    await assert.rejects(slow.start(), /cannot fetch JWKS/);
    // The 200 ms asked, with room for a loaded machine; below the default time-out's 5 s.
    assert.ok(Date.now() - started < 4_000, `gave up after ${Date.now() - started} ms`);
    await slow.close();
    silent.closeAllConnections();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });
});
