import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { SignedTokenCodec } from '../src/index.ts';
import { alterAt } from './fixtures.ts';

const secret = 'shared-secret-of-all-replicas';

describe('signed token', () => {
  const codec = new SignedTokenCodec(secret, 'connection');

  it('round-trips replica and id', () => {
    const payloads = [
      { replica: 'push-hub-7d9f8-abcde', id: '42' },
      { replica: 'r', id: '' },
      { replica: '', id: 'only-id' },
      { replica: 'ünïcödé/replica:1', id: 'id with spaces, commas and 🙂' },
      { replica: 'x'.repeat(255), id: 'y'.repeat(1_000) },
    ];
    for (const payload of payloads) assert.deepEqual(codec.decode(codec.encode(payload)), payload);
  });

  it('is URL-safe', () => {
    for (let i = 0; i < 50; i++) {
      const token = codec.encode({ replica: `replica-${i}`, id: `conn-${i * 7919}` });
      assert.match(token, /^[A-Za-z0-9_-]+$/);
      assert.equal(encodeURIComponent(token), token);
    }
  });

  it('is accepted by another replica with the same secret', () => {
    const token = codec.encode({ replica: 'a', id: '1' });
    assert.deepEqual(new SignedTokenCodec(secret, 'connection').decode(token), { replica: 'a', id: '1' });
  });

  it('refuses a token made with another secret', () => {
    const foreign = new SignedTokenCodec('some-other-secret-entirely', 'connection').encode({
      replica: 'a',
      id: '1',
    });
    assert.equal(codec.decode(foreign), undefined);
  });

  it('keeps purposes apart: a connection token is no correlation id', () => {
    const correlation = new SignedTokenCodec(secret, 'correlation');
    const token = codec.encode({ replica: 'a', id: '1' });
    assert.equal(correlation.decode(token), undefined);
    assert.equal(codec.decode(correlation.encode({ replica: 'a', id: '1' })), undefined);
  });

  it('refuses any altered character', () => {
    const token = codec.encode({ replica: 'hub-1', id: 'connection-123' });
    for (let i = 0; i < token.length; i++)
      assert.equal(codec.decode(alterAt(token, i)), undefined, `position ${i}`);
  });

  it('refuses truncated, extended and malformed tokens', () => {
    const token = codec.encode({ replica: 'hub-1', id: 'c1' });
    for (const bad of [
      '',
      'A',
      token.slice(0, -1),
      token.slice(1),
      `${token}A`,
      `${token}==`,
      token.replace(/.$/, '+'),
      `${token.slice(0, 5)}.${token.slice(5)}`,
      'not a token at all',
    ])
      assert.equal(codec.decode(bad), undefined, bad);
  });

  it('follows the documented layout, and refuses a replica length pointing past the end', () => {
    // Rebuild the MAC as src/signed-token.ts documents it, to reach the checks behind the MAC.
    const seal = (body: Buffer, version = 3) => {
      const key = createHmac('sha256', secret)
        .update(`gatehouse signed token v${version}: connection`)
        .digest();
      return Buffer.concat([body, createHmac('sha256', key).update(body).digest().subarray(0, 16)]).toString(
        'base64url',
      );
    };
    const header = (expiry: number, replicaLength: number, holderTagLength = 0) => {
      const h = Buffer.alloc(7);
      h[0] = 3;
      h.writeUInt32BE(expiry, 1);
      h[5] = replicaLength;
      h[6] = holderTagLength;
      return h;
    };
    const body = Buffer.concat([header(0, 2), Buffer.from('ab'), Buffer.from('id')]);
    assert.equal(seal(body), codec.encode({ replica: 'ab', id: 'id' }));
    const expiring = Buffer.concat([header(4_000_000_000, 2), Buffer.from('ab'), Buffer.from('id')]);
    assert.equal(seal(expiring), codec.encode({ replica: 'ab', id: 'id', expiresAt: 4_000_000_000_000 }));
    body[5] = 200;
    assert.equal(codec.decode(seal(body)), undefined);
    body[5] = 2;
    body[6] = 4;
    assert.equal(codec.decode(seal(body)), undefined, 'a holder tag of another length');
    body[6] = 0;
    body[0] = 4;
    assert.equal(codec.decode(seal(body)), undefined, 'unknown version');
    const key = createHmac('sha256', secret).update('gatehouse signed token v3: connection').digest();
    const tag = createHmac('sha256', key).update('holder\x00127.0.0.2').digest().subarray(0, 8);
    const held = Buffer.concat([header(0, 2, 8), Buffer.from('ab'), tag, Buffer.from('id')]);
    assert.equal(seal(held), codec.encode({ replica: 'ab', id: 'id', holder: '127.0.0.2' }));
  });

  it('refuses tokens of version 2 (no holder tag), even with a valid MAC', () => {
    const key = createHmac('sha256', secret).update('gatehouse signed token v2: connection').digest();
    const body = Buffer.concat([Buffer.from([2, 0, 0, 0, 0, 2]), Buffer.from('ab'), Buffer.from('id')]);
    const v2 = Buffer.concat([body, createHmac('sha256', key).update(body).digest().subarray(0, 16)]);
    assert.equal(codec.decode(v2.toString('base64url')), undefined);
  });

  it('tells whether a token was issued to a holder, without revealing the holder', () => {
    const token = codec.encode({ replica: 'hub-1', id: 'c1', holder: '203.0.113.7' });
    assert.deepEqual(codec.decode(token), { replica: 'hub-1', id: 'c1' }, 'any holder may read it');
    assert.equal(codec.heldBy(token, '203.0.113.7'), true);
    assert.equal(codec.heldBy(token, '203.0.113.8'), false, 'another holder');
    assert.equal(Buffer.from(token, 'base64url').includes('203.0.113.7'), false, 'the holder is not written');
    assert.equal(
      codec.heldBy(codec.encode({ replica: 'hub-1', id: 'c1' }), '203.0.113.7'),
      false,
      'no holder',
    );
    for (let i = 0; i < token.length; i++)
      assert.equal(codec.heldBy(alterAt(token, i), '203.0.113.7'), false, `altered at ${i}`);
    const foreign = new SignedTokenCodec('some-other-secret-entirely', 'connection');
    assert.equal(codec.heldBy(foreign.encode({ replica: 'a', id: '1', holder: 'h' }), 'h'), false);
  });

  it('issues each token with its own holder tag, however many are issued in a row', () => {
    const holders = ['203.0.113.7', '203.0.113.8', '2001:db8::', '203.0.113.7'];
    const tokens = holders.map((holder, i) => codec.encode({ replica: 'hub-1', id: `c${i}`, holder }));
    for (const [i, token] of tokens.entries()) {
      for (const holder of new Set(holders))
        assert.equal(codec.heldBy(token, holder), holder === holders[i], `token ${i}, holder ${holder}`);
    }
    assert.notEqual(tokens[0], tokens[3], 'the same holder, another connection');
  });

  it('tags holders of every length as HMAC-SHA256 does, a long one between short ones too', () => {
    const key = createHmac('sha256', secret).update('gatehouse signed token v3: connection').digest();
    const tagOf = (holder: string) =>
      createHmac('sha256', key).update(`holder\x00${holder}`).digest().subarray(0, 8);
    const holders = ['2001:db8:0:1', 'h'.repeat(200), '10.0.0.1', 'é'.repeat(40), '', '10.0.0.2'];
    for (const holder of holders) {
      const token = Buffer.from(codec.encode({ replica: 'ab', id: 'id', holder }), 'base64url');
      assert.deepEqual(token.subarray(9, 17), tagOf(holder), JSON.stringify(holder));
      assert.equal(codec.heldBy(token.toString('base64url'), holder), true);
      assert.equal(codec.heldBy(token.toString('base64url'), `${holder}x`), false);
    }
  });

  it('refuses tokens of version 1 (no expiry), even with a valid MAC', () => {
    const key = createHmac('sha256', secret).update('gatehouse signed token v1: connection').digest();
    const body = Buffer.concat([Buffer.from([1, 2]), Buffer.from('ab'), Buffer.from('id')]);
    const v1 = Buffer.concat([body, createHmac('sha256', key).update(body).digest().subarray(0, 16)]);
    assert.equal(codec.decode(v1.toString('base64url')), undefined);
  });

  it('carries an expiry to the second and refuses the token from then on', () => {
    let now = 1_700_000_000_000;
    const clocked = new SignedTokenCodec(secret, 'connection', { now: () => now });
    const token = clocked.encode({ replica: 'hub-1', id: 'c1', expiresAt: now + 60_500 });
    assert.deepEqual(clocked.decode(token), { replica: 'hub-1', id: 'c1', expiresAt: now + 61_000 });
    now += 60_999;
    assert.ok(clocked.decode(token), 'valid until its expiry');
    now += 1;
    assert.equal(clocked.decode(token), undefined, 'refused at its expiry');
    assert.throws(
      () => clocked.encode({ replica: 'r', id: 'i', expiresAt: Number.NaN }),
      /invalid token expiry/,
    );
  });

  it('stays compact: a pod name, a 16-character id and a holder make a token of at most 112 characters', () => {
    const token = codec.encode({
      replica: 'gatehouse-push-hub-7d9f8b6c5d-x2k4j',
      id: 'AbCdEfGhIjKlMnOp',
      expiresAt: Date.now() + 86_400_000,
      holder: '2001:db8:85a3:8d3',
    });
    assert.ok(token.length <= 112, `${token.length} characters`);
  });

  it('refuses empty secrets, empty purposes and over-long replica ids', () => {
    assert.throws(() => new SignedTokenCodec('', 'connection'), /secret is empty/);
    assert.throws(() => new SignedTokenCodec(secret, ''), /purpose is empty/);
    assert.throws(() => codec.encode({ replica: 'x'.repeat(256), id: '1' }), /longer than 255 bytes/);
  });
});
