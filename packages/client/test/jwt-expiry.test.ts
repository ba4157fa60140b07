import assert from 'node:assert/strict';
import { it } from 'node:test';
import { signJwt } from '@gatehouse/auth';
import { jwtExpired } from '../src/jwt-expiry.ts';

const sign = (claims: Record<string, unknown>) => signJwt(claims, { alg: 'HS256', key: 'k'.repeat(32) });

it('tells a JWT whose exp has passed', () => {
  const now = Date.now();
  assert.equal(jwtExpired(sign({ exp: Math.floor(now / 1000) - 1, name: 'ü~~?' }), now), true);
  assert.equal(jwtExpired(sign({ exp: Math.floor(now / 1000) + 60 }), now), false);
});

it('says false for what it cannot read: no exp, not a JWT', () => {
  assert.equal(jwtExpired(sign({ sub: 'x' })), false);
  assert.equal(jwtExpired('opaque-token'), false);
  assert.equal(jwtExpired('a.!!!.c'), false);
});
