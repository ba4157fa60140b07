import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { MemoryStore, StoreError } from '@gatehouse/store';
import {
  BlacklistCheck,
  blacklistKey,
  JwtError,
  JwtVerifier,
  SessionFields,
  SessionTokenCheck,
  StaticKeySource,
  secretKey,
  signJwt,
} from '../src/index.ts';
import { hsSecret } from './fixtures.ts';

describe('session token check', () => {
  let store: MemoryStore;
  let blacklist: BlacklistCheck;
  const verifier = new JwtVerifier({
    keys: [new StaticKeySource(secretKey(hsSecret))],
    algorithms: ['HS256'],
  });
  const sign = (claims: Record<string, unknown>) => signJwt(claims, { alg: 'HS256', key: hsSecret });
  const tokenCheck = (sessionField?: string) =>
    new SessionTokenCheck({ verifier, sessions: new SessionFields({ sessionField }), blacklist });

  const storeDown = () =>
    mock.method(store, 'ttl', async () => {
      throw new StoreError('store unreachable');
    });

  beforeEach(async () => {
    store = new MemoryStore();
    blacklist = new BlacklistCheck(store);
    await blacklist.start();
  });
  afterEach(async () => {
    mock.restoreAll();
    await blacklist.close();
    await store.close();
  });

  it('returns claims, session id and user name of a valid token', async () => {
    const claims = { jti: 'j1', username: 'alice', exp: Math.floor(Date.now() / 1000) + 60 };
    assert.deepEqual(await tokenCheck().verifyAndCheck(sign(claims)), {
      claims,
      sessionId: 'j1',
      userName: 'alice',
    });
  });

  it('refuses a token whose session is blacklisted, naming the session', async () => {
    await store.set(blacklistKey('j1'), '1', { ttlSeconds: 60 });
    await assert.rejects(tokenCheck().verifyAndCheck(sign({ jti: 'j1' })), (err: unknown) => {
      assert.ok(err instanceof JwtError);
      assert.equal(err.message, 'session j1 is blacklisted');
      assert.equal(err.code, 'blacklisted');
      return true;
    });
    assert.ok(await tokenCheck().verifyAndCheck(sign({ jti: 'j2' })));
  });

  it('checks the blacklist against JWT_SESSION_FIELD, not jti', async () => {
    const check = tokenCheck('/sessionId');
    const token = sign({ jti: 'jti-1', sessionId: 'session-1' });
    await store.set(blacklistKey('jti-1'), '1');
    assert.equal(
      (await check.verifyAndCheck(token)).sessionId,
      'session-1',
      'a blacklisted jti is not the session',
    );
    await store.set(blacklistKey('session-1'), '1');
    await assert.rejects(check.verifyAndCheck(token), { message: 'session session-1 is blacklisted' });
  });

  it('accepts a token without a session claim: it cannot be blacklisted', async () => {
    const result = await tokenCheck().verifyAndCheck(sign({ sub: 'x' }));
    assert.equal(result.sessionId, undefined);
  });

  it('refuses an invalid token before asking the blacklist', async () => {
    await assert.rejects(tokenCheck().verifyAndCheck('foobar'), {
      name: 'JwtError',
      message: 'malformed token',
    });
    storeDown();
    await assert.rejects(tokenCheck().verifyAndCheck(signJwt({ jti: 'j' }, { alg: 'HS256', key: 'x' })), {
      message: 'invalid signature',
    });
  });

  it('passes a store failure on as it is', async () => {
    storeDown();
    await assert.rejects(tokenCheck().verifyAndCheck(sign({ jti: 'j9' })), { name: 'StoreError' });
  });
});
