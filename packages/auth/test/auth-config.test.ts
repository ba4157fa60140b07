import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '@gatehouse/service-kit';
import { MemoryStore } from '@gatehouse/store';
import { type Auth, authConfig, blacklistKey, createAuthFromConfig, signJwt } from '../src/index.ts';
import { FakeClock, hsSecret, rsaPair } from './fixtures.ts';

const rsa = rsaPair();
/** An `exp` an hour from now: JWT_REQUIRE_EXP is on by default. */
const exp = Math.floor(Date.now() / 1000) + 3600;

describe('auth config', () => {
  let store: MemoryStore;
  const started: Auth[] = [];

  const tokenSecret = 'a-shared-secret-of-all-replicas';
  function auth(env: Record<string, string>, clock?: FakeClock): Auth {
    const config = loadConfig(authConfig, { TOKEN_SECRET: tokenSecret, ...env });
    const created = createAuthFromConfig(config, store, clock && { now: clock.now });
    started.push(created);
    return created;
  }

  beforeEach(() => {
    store = new MemoryStore();
  });
  afterEach(async () => {
    for (const a of started.splice(0)) await a.close();
    await store.close();
  });

  it('has RIG-compatible defaults', () => {
    const config = loadConfig(authConfig, { TOKEN_SECRET: tokenSecret });
    assert.deepEqual(config, {
      JWT_SECRET_KEY: undefined,
      JWT_ALG: ['HS256'],
      JWT_JWKS_URL: undefined,
      JWT_JWKS_ALLOW_HTTP: false,
      JWT_JWKS_REFRESH: 600_000,
      JWT_CLOCK_LEEWAY: 5_000,
      JWT_ISSUER: [],
      JWT_AUDIENCE: [],
      JWT_REQUIRE_EXP: true,
      JWT_SESSION_FIELD: '/jti',
      JWT_USER_FIELD: '/username',
      JWT_CACHE_SIZE: 10_000,
      JWT_CACHE_MAX_BYTES: 32 * 1024 * 1024,
      JWT_FAILURE_CACHE_SIZE: 1_000,
      BLACKLIST_NEGATIVE_CACHE: 0,
      TOKEN_SECRET: tokenSecret,
    });
  });

  it('refuses to start without TOKEN_SECRET, naming it and saying how to make one', () => {
    for (const env of [{}, { TOKEN_SECRET: '  ' }]) {
      assert.throws(
        () => loadConfig(authConfig, env),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError);
          assert.deepEqual(err.problems.length, 1);
          assert.match(err.message, /TOKEN_SECRET: is required: a random secret .*openssl rand -hex 32/);
          return true;
        },
      );
    }
  });

  it('refuses a plain-http JWKS URL unless it is loopback or JWT_JWKS_ALLOW_HTTP allows it', () => {
    const refused = [
      'http://idp.example/jwks',
      'http://10.0.0.7:8080/jwks',
      'http://localhost.evil.example/',
    ];
    for (const url of refused)
      assert.throws(
        () => auth({ JWT_JWKS_URL: url }),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError);
          assert.match(
            err.message,
            /JWT_JWKS_URL: plain http to .* use https \(or set JWT_JWKS_ALLOW_HTTP=true/,
          );
          return true;
        },
      );
    const accepted = [
      'https://idp.example/jwks',
      'http://127.0.0.1:9000/jwks',
      'http://127.1.2.3/jwks',
      'http://localhost:9000/jwks',
      'http://[::1]:9000/jwks',
    ];
    for (const url of accepted) assert.ok(auth({ JWT_JWKS_URL: url }));
    for (const url of refused) assert.ok(auth({ JWT_JWKS_URL: url, JWT_JWKS_ALLOW_HTTP: 'true' }));
  });

  it('reads every variable', () => {
    const config = loadConfig(authConfig, {
      JWT_SECRET_KEY: 'secret',
      JWT_ALG: 'hs256, RS256,PS512,RS256',
      JWT_JWKS_URL: 'https://idp.example/.well-known/jwks.json',
      JWT_JWKS_REFRESH: '1h',
      JWT_CLOCK_LEEWAY: '30s',
      JWT_ISSUER: 'https://idp.example, other',
      JWT_AUDIENCE: 'gateway',
      JWT_SESSION_FIELD: '/session/id',
      JWT_USER_FIELD: '/preferred_username',
      JWT_CACHE_SIZE: '0',
      BLACKLIST_NEGATIVE_CACHE: '500ms',
      JWT_JWKS_ALLOW_HTTP: 'true',
      TOKEN_SECRET: 'a-shared-secret-of-all-replicas',
    });
    assert.equal(config.JWT_JWKS_ALLOW_HTTP, true);
    assert.deepEqual(config.JWT_ALG, ['HS256', 'RS256', 'PS512']);
    assert.equal(config.JWT_JWKS_REFRESH, 3_600_000);
    assert.equal(config.JWT_CLOCK_LEEWAY, 30_000);
    assert.deepEqual(config.JWT_ISSUER, ['https://idp.example', 'other']);
    assert.equal(config.JWT_SESSION_FIELD, '/session/id');
    assert.equal(config.JWT_CACHE_SIZE, 0);
    assert.equal(config.BLACKLIST_NEGATIVE_CACHE, 500);
  });

  it('names every bad variable at once', () => {
    const env = {
      JWT_ALG: 'HS256,none',
      JWT_JWKS_URL: 'ftp://idp.example/keys',
      JWT_CLOCK_LEEWAY: '1h',
      JWT_SESSION_FIELD: 'jti',
      JWT_USER_FIELD: '/a~2',
      JWT_CACHE_SIZE: '-1',
      TOKEN_SECRET: 'short',
    };
    assert.throws(
      () => loadConfig(authConfig, env),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.deepEqual(
          err.problems.map((p) => p.split(':')[0]),
          Object.keys(env),
        );
        assert.match(err.message, /JWT_ALG: unsupported NONE/);
        return true;
      },
    );
  });

  it('verifies HS tokens with JWT_SECRET_KEY and warns about weak settings', async () => {
    const a = auth({ JWT_SECRET_KEY: 'secret' });
    assert.ok(await a.verifier.verify(signJwt({ sub: 'x', exp }, { alg: 'HS256', key: 'secret' })));
    assert.ok(a.warnings.some((w) => /shorter than 32 bytes/.test(w)));
    const strong = auth({ JWT_SECRET_KEY: hsSecret, JWT_ISSUER: 'idp', JWT_AUDIENCE: 'gw' });
    assert.deepEqual(strong.warnings, []);
  });

  it('refuses a token without exp unless JWT_REQUIRE_EXP=false, saying so', async () => {
    const lasting = signJwt({ sub: 'x' }, { alg: 'HS256', key: hsSecret });
    const strict = auth({ JWT_SECRET_KEY: hsSecret });
    await assert.rejects(strict.verifyAndCheck(lasting), {
      code: 'claim',
      message: 'token has no exp claim',
    });
    assert.ok(await strict.verifyAndCheck(signJwt({ sub: 'x', exp }, { alg: 'HS256', key: hsSecret })));
    assert.ok(await auth({ JWT_SECRET_KEY: hsSecret, JWT_REQUIRE_EXP: 'false' }).verifyAndCheck(lasting));
  });

  it('warns when a key is set but the issuer, the audience or exp go unchecked', () => {
    const unchecked = auth({ JWT_SECRET_KEY: hsSecret, JWT_REQUIRE_EXP: 'false' }).warnings;
    assert.deepEqual(unchecked, [
      'JWT_ISSUER is not set: tokens of any issuer signed with the key are accepted',
      'JWT_AUDIENCE is not set: tokens for any audience signed with the key are accepted',
      'JWT_REQUIRE_EXP=false: tokens without exp are accepted and never expire',
    ]);
    assert.equal(auth({ JWT_SECRET_KEY: hsSecret, JWT_ISSUER: 'idp' }).warnings.length, 1);
    assert.ok(
      auth({}).warnings.every((w) => !/JWT_ISSUER|JWT_AUDIENCE|JWT_REQUIRE_EXP/.test(w)),
      'no key: nothing is accepted',
    );
  });

  it('refuses every token, clearly, without a key', async () => {
    const a = auth({});
    assert.ok(a.warnings.some((w) => /no JWT key configured/.test(w)));
    await assert.rejects(a.verifyAndCheck(signJwt({}, { alg: 'HS256', key: hsSecret })), {
      message: 'no JWT key configured',
    });
  });

  it('reads an RSA public key PEM from JWT_SECRET_KEY, also with escaped newlines', async () => {
    for (const pem of [rsa.publicPem, rsa.publicPem.trim().replaceAll('\n', '\\n')]) {
      const a = auth({ JWT_SECRET_KEY: pem, JWT_ALG: 'RS256' });
      assert.ok(await a.verifier.verify(signJwt({ exp }, { alg: 'RS256', key: rsa.privateKey })));
    }
  });

  it('refuses key settings that contradict each other', () => {
    const problem = (env: Record<string, string>) => {
      try {
        auth(env);
      } catch (err) {
        assert.ok(err instanceof ConfigError);
        return err.message;
      }
      assert.fail('expected a ConfigError');
    };
    assert.match(problem({ JWT_SECRET_KEY: rsa.publicPem }), /is an RSA public key, but JWT_ALG \(HS256\)/);
    assert.match(problem({ JWT_SECRET_KEY: 'secret', JWT_ALG: 'RS256' }), /is an HMAC secret, but JWT_ALG/);
    assert.match(
      problem({
        JWT_SECRET_KEY: '-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----',
        JWT_ALG: 'RS256',
      }),
      /JWT_SECRET_KEY: cannot read public key PEM/,
    );
    const small = rsaPair(1024);
    assert.match(problem({ JWT_SECRET_KEY: small.publicPem, JWT_ALG: 'RS256' }), /too short/);
  });

  it('applies leeway, issuer, audience and cache size', async () => {
    const clock = new FakeClock();
    const base = { JWT_SECRET_KEY: hsSecret };
    const expiredBy3s = signJwt({ exp: clock.seconds(-3) }, { alg: 'HS256', key: hsSecret });
    assert.ok(await auth(base, clock).verifier.verify(expiredBy3s), 'default leeway 5 s');
    await assert.rejects(auth({ ...base, JWT_CLOCK_LEEWAY: '0' }, clock).verifier.verify(expiredBy3s), {
      message: 'token expired',
    });
    const checked = auth({ ...base, JWT_ISSUER: 'idp', JWT_AUDIENCE: 'gw' });
    assert.ok(
      await checked.verifier.verify(signJwt({ iss: 'idp', aud: 'gw', exp }, { alg: 'HS256', key: hsSecret })),
    );
    await assert.rejects(
      checked.verifier.verify(signJwt({ iss: 'x', aud: 'gw', exp }, { alg: 'HS256', key: hsSecret })),
      {
        message: 'unexpected issuer',
      },
    );
    const uncached = auth({ ...base, JWT_CACHE_SIZE: '0' });
    const token = signJwt({ exp }, { alg: 'HS256', key: hsSecret });
    await uncached.verifier.verify(token);
    await uncached.verifier.verify(token);
    assert.equal(uncached.verifier.stats().signatureChecks, 2);
  });

  it('checks the blacklist through JWT_SESSION_FIELD after start', async () => {
    const a = auth({ JWT_SECRET_KEY: hsSecret, JWT_SESSION_FIELD: '/sid', JWT_USER_FIELD: '/name' });
    await a.start();
    const token = signJwt({ jti: 'j', sid: 7, name: 'bob', exp }, { alg: 'HS256', key: hsSecret });
    assert.deepEqual(
      { ...(await a.verifyAndCheck(token)), claims: undefined },
      { claims: undefined, sessionId: '7', userName: 'bob' },
    );
    await store.set(blacklistKey('7'), '1', { ttlSeconds: 30 });
    await assert.rejects(a.verifyAndCheck(token), { message: 'session 7 is blacklisted' });
  });

  it('builds connection and correlation codecs that replicas share but never mix', () => {
    const env = { TOKEN_SECRET: 'a-shared-secret-of-all-replicas' };
    const replicaA = auth(env);
    const replicaB = auth(env);
    const stranger = auth({ TOKEN_SECRET: 'another-deployment-secret' });
    const token = replicaA.connectionTokens.encode({ replica: 'a', id: '1' });
    assert.deepEqual(replicaB.connectionTokens.decode(token), { replica: 'a', id: '1' });
    assert.equal(replicaB.correlationIds.decode(token), undefined);
    assert.equal(stranger.connectionTokens.decode(token), undefined);
    const correlation = replicaB.correlationIds.encode({ replica: 'b', id: '9' });
    assert.deepEqual(replicaA.correlationIds.decode(correlation), { replica: 'b', id: '9' });
    assert.equal(replicaA.connectionTokens.decode(correlation), undefined);
  });

  it('verifies with a JWKS next to an HS secret', async () => {
    const jwk = { ...rsa.publicKey.export({ format: 'jwk' }), kid: 'k1' };
    const server = createServer((_req, res) => res.end(JSON.stringify({ keys: [jwk] })));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
      const a = auth({ JWT_JWKS_URL: url, JWT_SECRET_KEY: hsSecret, JWT_ALG: 'RS256,HS256' });
      await a.start();
      assert.ok(
        await a.verifyAndCheck(signJwt({ jti: 'r', exp }, { alg: 'RS256', key: rsa.privateKey, kid: 'k1' })),
      );
      assert.ok(await a.verifyAndCheck(signJwt({ jti: 'h', exp }, { alg: 'HS256', key: hsSecret })));
      await assert.rejects(a.verifyAndCheck(signJwt({}, { alg: 'HS256', key: rsa.publicPem })), {
        message: 'invalid signature',
      });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
