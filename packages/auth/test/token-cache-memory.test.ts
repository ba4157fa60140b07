/**
 * The verified-token cache under an attack of distinct junk tokens: memory stays flat, and the
 * refused tokens never push a valid one out (valid tokens keep costing no crypto).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { MiB, mib, settledMemory } from '@gatehouse/testkit';
import { JwtVerifier, StaticKeySource, secretKey, signJwt } from '../src/index.ts';
import { hsSecret } from './fixtures.ts';

const attackTokens = 10_000;
const junkSize = 4096;

function verifier(options: { cacheMaxBytes?: number } = {}): JwtVerifier {
  return new JwtVerifier({
    keys: [new StaticKeySource(secretKey(hsSecret))],
    algorithms: ['HS256'],
    ...options,
  });
}

/** A well-formed HS256 token with a payload of `size` characters and a wrong signature. */
function junkToken(size: number): string {
  const header = Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url');
  const payload = Buffer.from(JSON.stringify({ junk: randomBytes(size / 2).toString('hex') })).toString(
    'base64url',
  );
  return `${header}.${payload}.${randomBytes(32).toString('base64url')}`;
}

describe('verified-token cache under attack', () => {
  it(`holds memory flat through ${attackTokens} distinct junk tokens and keeps every valid token cached`, async () => {
    const v = verifier();
    const valid = Array.from({ length: 100 }, (_, i) =>
      signJwt({ sub: `user-${i}` }, { alg: 'HS256', key: hsSecret }),
    );
    for (const token of valid) await v.verify(token);
    const before = await settledMemory();
    for (let i = 0; i < attackTokens; i++) await v.verify(junkToken(junkSize)).catch(() => undefined);
    const after = await settledMemory();
    const grown = after.heap - before.heap;
    console.log(`heap after ${attackTokens} junk tokens of ${junkSize} B: +${mib(grown)}`);
    assert.ok(grown < 4 * MiB, `heap grew by ${mib(grown)}`);
    assert.ok(v.stats().cachedFailures <= 1_000);

    const checks = v.stats().signatureChecks;
    for (const token of valid) await v.verify(token);
    assert.equal(v.stats().signatureChecks, checks, 'no valid token was evicted by the junk');
  });

  it('remembers a bounded number of token headers: distinct headers hold memory flat and lock no token out', async () => {
    const v = verifier();
    const tokens = 20_000;
    // Each header is accepted (HS256, a string kid) and as long as a remembered header may be, so
    // the verifier decodes and keeps it before the forged signature is refused.
    const header = () =>
      Buffer.from(
        JSON.stringify({ alg: 'HS256', typ: 'JWT', kid: randomBytes(70).toString('hex') }),
      ).toString('base64url');
    const payload = Buffer.from('{"sub":"x"}').toString('base64url');
    const before = await settledMemory();
    for (let i = 0; i < tokens; i++)
      await v
        .verify(`${header()}.${payload}.${randomBytes(32).toString('base64url')}`)
        .catch(() => undefined);
    const after = await settledMemory();
    const grown = after.heap - before.heap;
    console.log(`heap after ${tokens} distinct accepted headers: +${mib(grown)}`);
    assert.ok(grown < 3 * MiB, `heap grew by ${mib(grown)}`);
    const valid = signJwt({ sub: 'after' }, { alg: 'HS256', key: hsSecret });
    assert.equal((await v.verify(valid)).sub, 'after');
  });

  it('bounds the valid tokens by their bytes, not only their count', async () => {
    const maxBytes = 4 * MiB;
    const v = verifier({ cacheMaxBytes: maxBytes });
    const before = await settledMemory();
    for (let i = 0; i < attackTokens; i++) {
      const token = signJwt(
        { sub: `user-${i}`, pad: randomBytes(junkSize / 2).toString('hex') },
        { alg: 'HS256', key: hsSecret },
      );
      await v.verify(token);
    }
    const after = await settledMemory();
    const grown = after.heap - before.heap;
    console.log(
      `heap after ${attackTokens} valid tokens of ~${junkSize} B: +${mib(grown)}, ${v.stats().cachedTokens} cached (${mib(v.stats().cachedBytes)} estimated)`,
    );
    assert.ok(v.stats().cachedBytes <= maxBytes);
    assert.ok(grown < maxBytes + MiB, `heap grew by ${mib(grown)}, more than the ${mib(maxBytes)} budget`);
    assert.ok(v.stats().cachedTokens > 100, 'the budget is used, not wasted');
  });
});
