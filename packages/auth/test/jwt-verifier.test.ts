import assert from 'node:assert/strict';
import { Verify } from 'node:crypto';
import { _HMAC as NobleHmac } from '@noble/hashes/hmac.js';
import { after, before, describe, it, mock } from 'node:test';
import {
  entryBytes,
  type JwtAlgorithm,
  JwtError,
  type JwtVerifierOptions,
  JwtVerifier,
  publicKeyFromPem,
  StaticKeySource,
  secretKey,
  signJwt,
} from '../src/index.ts';
import { alterAt, FakeClock, hsSecret, type RsaPair, rsaPair } from './fixtures.ts';

const rsa = rsaPair();

function hsVerifier(options: Partial<JwtVerifierOptions> = {}): JwtVerifier {
  return new JwtVerifier({
    keys: [new StaticKeySource(secretKey(hsSecret))],
    algorithms: ['HS256', 'HS384', 'HS512'],
    ...options,
  });
}

function rsVerifier(pair: RsaPair, options: Partial<JwtVerifierOptions> = {}): JwtVerifier {
  return new JwtVerifier({
    keys: [new StaticKeySource(publicKeyFromPem(pair.publicPem))],
    algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'],
    ...options,
  });
}

async function rejection(promise: Promise<unknown>): Promise<JwtError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof JwtError, `expected a JwtError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the token to be refused');
}

describe('JWT verifier', () => {
  it('verifies HS256, HS384 and HS512 tokens and returns their claims', async () => {
    const verifier = hsVerifier();
    for (const alg of ['HS256', 'HS384', 'HS512'] as const) {
      const token = signJwt({ sub: alg, jti: 'j1', nested: { a: [1] } }, { alg, key: hsSecret });
      assert.deepEqual(await verifier.verify(token), { sub: alg, jti: 'j1', nested: { a: [1] } });
    }
  });

  it('verifies the jwt.io HS256 example token', async () => {
    const token =
      'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
    const verifier = new JwtVerifier({
      keys: [new StaticKeySource(secretKey('your-256-bit-secret'))],
      algorithms: ['HS256'],
    });
    assert.deepEqual(await verifier.verify(token), { sub: '1234567890', name: 'John Doe', iat: 1516239022 });
    const claims = { sub: '1234567890', name: 'John Doe', iat: 1516239022 };
    assert.equal(signJwt(claims, { alg: 'HS256', key: 'your-256-bit-secret' }), token, 'the signer agrees');
  });

  it('verifies RS256/384/512 and PS256/384/512 tokens with a PEM public key', async () => {
    const verifier = rsVerifier(rsa);
    for (const alg of ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'] as const) {
      const token = signJwt({ sub: alg }, { alg, key: rsa.privateKey });
      assert.deepEqual(await verifier.verify(token), { sub: alg });
    }
  });

  it('refuses a token signed with another key', async () => {
    const other = rsaPair();
    const rs = await rejection(rsVerifier(rsa).verify(signJwt({}, { alg: 'RS256', key: other.privateKey })));
    assert.equal(rs.message, 'invalid signature');
    const hs = await rejection(hsVerifier().verify(signJwt({}, { alg: 'HS256', key: 'another secret' })));
    assert.equal(hs.message, 'invalid signature');
    assert.equal(hs.code, 'invalid_signature');
  });

  it('takes an HMAC signature only in its one base64url spelling, of every HS length', async () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (const alg of ['HS256', 'HS384', 'HS512'] as const) {
      const verifier = hsVerifier({ cacheSize: 0 });
      const token = signJwt({ sub: 'alice' }, { alg, key: hsSecret });
      assert.equal((await verifier.verify(token)).sub, 'alice');
      // The last character's low bits are padding when the MAC's length is not a multiple of 3
      // (32 and 64 bytes): another character there decodes to the same bytes, and must not pass.
      const last = alphabet.indexOf(token.at(-1)!);
      const padded = `${token.slice(0, -1)}${alphabet[last ^ 1]}`;
      if (alg !== 'HS384')
        assert.deepEqual(
          Buffer.from(padded.split('.')[2]!, 'base64url'),
          Buffer.from(token.split('.')[2]!, 'base64url'),
        );
      assert.equal((await rejection(verifier.verify(padded))).code, 'invalid_signature', alg);
      for (const signature of ['', `${token.split('.')[2]}A`, token.split('.')[2]!.slice(1)])
        assert.equal(
          (await rejection(verifier.verify(`${token.slice(0, token.lastIndexOf('.'))}.${signature}`))).code,
          'invalid_signature',
          `${alg}: signature of ${signature.length} characters`,
        );
    }
  });

  it('refuses a token whose payload, header or signature was altered', async () => {
    const verifier = hsVerifier({ cacheSize: 0 });
    const token = signJwt({ sub: 'alice', admin: false }, { alg: 'HS256', key: hsSecret });
    const [header, , signature] = token.split('.');
    const forgedPayload = Buffer.from(JSON.stringify({ sub: 'alice', admin: true })).toString('base64url');
    const forged = `${header}.${forgedPayload}.${signature}`;
    assert.equal((await rejection(verifier.verify(forged))).message, 'invalid signature');
    const lastSigChar = token.length - 2; // not the last character: its low bits may be padding
    assert.equal(
      (await rejection(verifier.verify(alterAt(token, lastSigChar)))).message,
      'invalid signature',
    );
    const headerHs384 = Buffer.from(JSON.stringify({ alg: 'HS384', typ: 'JWT' })).toString('base64url');
    const swapped = `${headerHs384}.${token.split('.')[1]}.${signature}`;
    assert.equal((await rejection(verifier.verify(swapped))).message, 'invalid signature');
    assert.equal(
      (await rejection(verifier.verify(`${header}.${token.split('.')[1]}.`))).message,
      'invalid signature',
    );
  });

  it('refuses alg none, whatever the configuration', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const payload = Buffer.from(JSON.stringify({ sub: 'mallory' })).toString('base64url');
    for (const token of [`${header}.${payload}.`, `${header}.${payload}.c2ln`]) {
      const err = await rejection(hsVerifier().verify(token));
      assert.equal(err.message, 'algorithm none not allowed');
      assert.equal(err.code, 'algorithm');
    }
  });

  it('refuses algorithms the configuration does not allow', async () => {
    const verifier = rsVerifier(rsa, { algorithms: ['RS256'] });
    const rs512 = signJwt({}, { alg: 'RS512', key: rsa.privateKey });
    assert.equal((await rejection(verifier.verify(rs512))).message, 'algorithm RS512 not allowed');
    const es = signJwt({}, { alg: 'HS256', key: hsSecret, header: { alg: 'ES256' } });
    assert.equal((await rejection(verifier.verify(es))).message, 'algorithm ES256 not allowed');
    const hsOnly = hsVerifier({ algorithms: ['HS256'] });
    const hs512 = signJwt({}, { alg: 'HS512', key: hsSecret });
    assert.equal((await rejection(hsOnly.verify(hs512))).message, 'algorithm HS512 not allowed');
  });

  it('refuses an HS token checked against an RSA public key (algorithm confusion)', async () => {
    // The classic attack: sign HS256 with the public key's PEM text as the HMAC secret.
    const verifier = rsVerifier(rsa, { algorithms: ['RS256', 'HS256'] });
    const forged = signJwt({ sub: 'mallory' }, { alg: 'HS256', key: rsa.publicPem });
    const err = await rejection(verifier.verify(forged));
    assert.equal(err.message, 'algorithm HS256 cannot be used with an RSA public key');
    assert.equal(err.code, 'algorithm');
    const der = rsa.publicKey.export({ type: 'spki', format: 'der' });
    await rejection(verifier.verify(signJwt({}, { alg: 'HS256', key: der })));
  });

  it('refuses an RS token when the only key is an HMAC secret', async () => {
    const verifier = hsVerifier({ algorithms: ['HS256', 'RS256'] });
    const token = signJwt({}, { alg: 'RS256', key: rsa.privateKey });
    assert.equal(
      (await rejection(verifier.verify(token))).message,
      'algorithm RS256 cannot be used with an HMAC secret',
    );
  });

  it('refuses malformed tokens', async () => {
    const verifier = hsVerifier();
    const b64 = (v: unknown) =>
      Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
    const sig = 'c2ln';
    const cases: [string, RegExp][] = [
      ['foobar', /^malformed token$/],
      ['a.b', /^malformed token$/],
      ['a.b.c.d.e', /^malformed token$/],
      ['', /^malformed token$/],
      [`.${b64({})}.${sig}`, /^malformed token$/],
      [`${b64({ alg: 'HS256' })}..${sig}`, /^malformed token$/],
      [`${b64({ alg: 'HS256' })}.${b64({})}.s+g=`, /^malformed token$/],
      [`${b64('not json')}.${b64({})}.${sig}`, /header is not JSON/],
      [`${b64([1])}.${b64({})}.${sig}`, /header is not a JSON object/],
      [`${b64({ typ: 'JWT' })}.${b64({})}.${sig}`, /header has no alg/],
      [`${b64({ alg: 'HS256', kid: 7 })}.${b64({})}.${sig}`, /kid is not a string/],
    ];
    for (const [token, message] of cases) {
      const err = await rejection(verifier.verify(token));
      assert.match(err.message, message, token);
      assert.equal(err.code, 'malformed', token);
    }
  });

  it('checks the signature before reading the payload', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'HS256' })).toString('base64url');
    const token = `${header}.${Buffer.from('[1,2]').toString('base64url')}.c2ln`;
    assert.equal((await rejection(hsVerifier().verify(token))).message, 'invalid signature');
    const signed = signJwt([1, 2] as unknown as Record<string, unknown>, { alg: 'HS256', key: hsSecret });
    assert.match((await rejection(hsVerifier().verify(signed))).message, /payload is not a JSON object/);
  });

  it('refuses critical header extensions it does not understand', async () => {
    const token = signJwt({}, { alg: 'HS256', key: hsSecret, header: { crit: ['b64'], b64: false } });
    assert.equal(
      (await rejection(hsVerifier().verify(token))).message,
      'unsupported critical header parameters',
    );
  });

  it('refuses expired tokens, within the clock leeway only', async () => {
    const clock = new FakeClock();
    const expiredBy3s = signJwt({ exp: clock.seconds(-3) }, { alg: 'HS256', key: hsSecret });
    const strict = hsVerifier({ now: clock.now });
    const err = await rejection(strict.verify(expiredBy3s));
    assert.equal(err.message, 'token expired');
    assert.equal(err.code, 'expired');
    const lenient = hsVerifier({ now: clock.now, clockLeewayMs: 5_000 });
    assert.ok(await lenient.verify(expiredBy3s));
    const expiresNow = signJwt({ exp: clock.seconds() }, { alg: 'HS256', key: hsSecret });
    assert.equal((await rejection(strict.verify(expiresNow))).message, 'token expired', 'exp is exclusive');
    const future = signJwt({ exp: clock.seconds(60) }, { alg: 'HS256', key: hsSecret });
    assert.ok(await strict.verify(future));
  });

  it('refuses tokens not valid yet, within the clock leeway only', async () => {
    const clock = new FakeClock();
    const in3s = signJwt({ nbf: clock.seconds(3) }, { alg: 'HS256', key: hsSecret });
    const err = await rejection(hsVerifier({ now: clock.now }).verify(in3s));
    assert.equal(err.message, 'token not yet valid');
    assert.ok(await hsVerifier({ now: clock.now, clockLeewayMs: 5_000 }).verify(in3s));
  });

  it('refuses time claims that are not numbers', async () => {
    for (const claims of [{ exp: '2030-01-01' }, { nbf: null }, { iat: 'now' }]) {
      const token = signJwt(claims, { alg: 'HS256', key: hsSecret });
      assert.match((await rejection(hsVerifier().verify(token))).message, /^invalid (exp|nbf|iat) claim/);
    }
  });

  it('requires exp only when asked to', async () => {
    const token = signJwt({ sub: 'x' }, { alg: 'HS256', key: hsSecret });
    assert.ok(await hsVerifier().verify(token));
    assert.equal(
      (await rejection(hsVerifier({ requireExp: true }).verify(token))).message,
      'token has no exp claim',
    );
  });

  it('checks iss and aud when configured', async () => {
    const verifier = hsVerifier({ issuers: ['https://idp.example'], audiences: ['gateway', 'api'] });
    const sign = (claims: Record<string, unknown>) => signJwt(claims, { alg: 'HS256', key: hsSecret });
    assert.ok(await verifier.verify(sign({ iss: 'https://idp.example', aud: 'api' })));
    assert.ok(await verifier.verify(sign({ iss: 'https://idp.example', aud: ['other', 'gateway'] })));
    const wrongIss = await rejection(verifier.verify(sign({ iss: 'https://evil.example', aud: 'api' })));
    assert.equal(wrongIss.message, 'unexpected issuer');
    assert.equal((await rejection(verifier.verify(sign({ aud: 'api' })))).message, 'unexpected issuer');
    const wrongAud = await rejection(verifier.verify(sign({ iss: 'https://idp.example', aud: ['other'] })));
    assert.equal(wrongAud.message, 'unexpected audience');
    const noAud = await rejection(verifier.verify(sign({ iss: 'https://idp.example' })));
    assert.equal(noAud.message, 'unexpected audience');
    assert.ok(
      await hsVerifier().verify(sign({ iss: 'anyone', aud: 'anything' })),
      'unchecked when not configured',
    );
  });

  it('refuses every token when no key is configured', async () => {
    const verifier = new JwtVerifier({ keys: [], algorithms: ['HS256'] });
    const err = await rejection(verifier.verify(signJwt({}, { alg: 'HS256', key: hsSecret })));
    assert.equal(err.message, 'no JWT key configured');
    assert.equal(err.code, 'no_key');
  });

  it('hands out frozen claims, so one caller cannot change them for the next', async () => {
    const verifier = hsVerifier();
    const token = signJwt({ roles: ['user'], profile: { name: 'a' } }, { alg: 'HS256', key: hsSecret });
    const claims = (await verifier.verify(token)) as { roles: string[]; profile: { name: string } };
    assert.throws(() => claims.roles.push('admin'), TypeError);
    assert.throws(() => {
      claims.profile.name = 'b';
    }, TypeError);
    assert.deepEqual(await verifier.verify(token), { roles: ['user'], profile: { name: 'a' } });
  });

  describe('verified-token cache', () => {
    let hmacCalls: ReturnType<typeof mock.method>;
    let rsaCalls: ReturnType<typeof mock.method>;
    // Counting where the signature check ends (an HMAC's digest in @noble/hashes, an RSA verify in
    // node:crypto, whichever library calls them) proves a cache hit does no crypto at all.
    before(() => {
      hmacCalls = mock.method(NobleHmac.prototype, 'digestInto');
      rsaCalls = mock.method(Verify.prototype, 'verify');
    });
    after(() => mock.restoreAll());
    const cryptoCalls = () => hmacCalls.mock.callCount() + rsaCalls.mock.callCount();

    for (const alg of ['HS256', 'RS256'] as const satisfies JwtAlgorithm[]) {
      it(`does no crypto for a repeated ${alg} token`, async () => {
        const verifier = alg === 'HS256' ? hsVerifier() : rsVerifier(rsa);
        const token = signJwt({ sub: 'alice' }, { alg, key: alg === 'HS256' ? hsSecret : rsa.privateKey });
        const before = cryptoCalls();
        const first = await verifier.verify(token);
        assert.equal(cryptoCalls(), before + 1);
        for (let i = 0; i < 100; i++) assert.equal(await verifier.verify(token), first);
        assert.equal(cryptoCalls(), before + 1, 'no crypto on cache hits');
        assert.deepEqual(verifier.stats(), {
          cacheHits: 100,
          cacheMisses: 1,
          signatureChecks: 1,
          cachedTokens: 1,
          cachedBytes: entryBytes(token),
          cachedFailures: 0,
        });
      });
    }

    it('verifies every time with the cache off', async () => {
      const verifier = hsVerifier({ cacheSize: 0 });
      const token = signJwt({}, { alg: 'HS256', key: hsSecret });
      const before = cryptoCalls();
      for (let i = 0; i < 3; i++) await verifier.verify(token);
      assert.equal(cryptoCalls(), before + 3);
    });

    it('stops trusting a cached token when it expires', async () => {
      const clock = new FakeClock();
      const verifier = hsVerifier({ now: clock.now, clockLeewayMs: 2_000 });
      const token = signJwt({ exp: clock.seconds(10) }, { alg: 'HS256', key: hsSecret });
      assert.ok(await verifier.verify(token));
      clock.advance(11_900);
      assert.ok(await verifier.verify(token), 'within the leeway');
      assert.equal(verifier.stats().signatureChecks, 1);
      clock.advance(100);
      assert.equal((await rejection(verifier.verify(token))).message, 'token expired');
    });

    it('checks a long-lived token again after the cache TTL', async () => {
      const clock = new FakeClock();
      const verifier = hsVerifier({ now: clock.now, cacheMaxTtlMs: 1_000 });
      const token = signJwt({ sub: 'forever' }, { alg: 'HS256', key: hsSecret });
      await verifier.verify(token);
      await verifier.verify(token);
      clock.advance(1_000);
      await verifier.verify(token);
      assert.equal(verifier.stats().signatureChecks, 2);
    });

    it('remembers a forged token briefly, and a not-yet-valid one not at all', async () => {
      const clock = new FakeClock();
      const verifier = hsVerifier({ now: clock.now, failureCacheTtlMs: 5_000 });
      const forged = signJwt({}, { alg: 'HS256', key: 'wrong secret' });
      for (let i = 0; i < 3; i++) await rejection(verifier.verify(forged));
      assert.equal(verifier.stats().signatureChecks, 1);
      clock.advance(5_000);
      assert.equal((await rejection(verifier.verify(forged))).message, 'invalid signature');
      assert.equal(verifier.stats().signatureChecks, 2);

      const early = signJwt({ nbf: clock.seconds(1) }, { alg: 'HS256', key: hsSecret });
      await rejection(verifier.verify(early));
      clock.advance(1_000);
      assert.ok(await verifier.verify(early), 'valid as soon as nbf is reached');
    });

    it('does not remember tokens refused before any crypto', async () => {
      const verifier = rsVerifier(rsa, { algorithms: ['RS256'] });
      await rejection(verifier.verify('not-a-token'));
      await rejection(verifier.verify(signJwt({}, { alg: 'HS256', key: hsSecret })));
      assert.equal(verifier.stats().cachedFailures, 0);
      await rejection(verifier.verify(signJwt({}, { alg: 'RS256', key: rsaPair().privateKey })));
      assert.equal(verifier.stats().cachedFailures, 1, 'a failed signature check is remembered');
      assert.equal(verifier.stats().cachedTokens, 0, 'apart from the verified tokens');
    });

    it('once full, takes a token only on its second sighting: one-shot tokens never push out the others', async () => {
      const verifier = hsVerifier({ cacheSize: 2 });
      const [a, b] = [
        signJwt({ n: 'a' }, { alg: 'HS256', key: hsSecret }),
        signJwt({ n: 'b' }, { alg: 'HS256', key: hsSecret }),
      ];
      await verifier.verify(a);
      await verifier.verify(b);
      const full = verifier.stats();
      assert.equal(full.cachedTokens, 2, 'tokens are kept from their first sighting while there is room');
      for (let i = 0; i < 50; i++)
        await verifier.verify(signJwt({ once: i }, { alg: 'HS256', key: hsSecret }));
      await verifier.verify(a);
      await verifier.verify(b);
      const after = verifier.stats();
      assert.equal(after.signatureChecks, full.signatureChecks + 50, 'a and b are still cached');
      assert.equal(after.cachedBytes, full.cachedBytes, 'nothing inserted, nothing evicted');
      const c = signJwt({ n: 'c' }, { alg: 'HS256', key: hsSecret });
      await verifier.verify(c);
      await verifier.verify(c);
      const checks = verifier.stats().signatureChecks;
      assert.equal(checks, after.signatureChecks + 2, 'checked on its first and second sighting');
      await verifier.verify(c);
      assert.equal(verifier.stats().signatureChecks, checks, 'kept from its second sighting');
    });

    it('holds at most cacheSize tokens and keeps the ones in use', async () => {
      const verifier = hsVerifier({ cacheSize: 3 });
      const tokens = Array.from({ length: 6 }, (_, i) => signJwt({ i }, { alg: 'HS256', key: hsSecret }));
      const hot = tokens[0]!;
      await verifier.verify(hot);
      for (const token of tokens.slice(1)) {
        await verifier.verify(token);
        await verifier.verify(hot);
        assert.ok(verifier.stats().cachedTokens <= 3);
      }
      assert.equal(verifier.stats().signatureChecks, 6, 'the hot token stayed cached throughout');
    });
  });
});
