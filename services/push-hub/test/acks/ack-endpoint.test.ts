/**
 * POST /_gw/v1/ack through a hub's public port, as a client (or an attacker) sends it, with real
 * JWTs: each bad request gets its status and a text naming what is wrong; a good one moves the
 * session's position in the store forward only; concurrent acks through two replicas on one store
 * never move it backwards; the store down is a 503 with Retry-After.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { MemoryStore } from '@gatehouse/store';
import { type HubFixture, startHubFixture } from '../hub-fixture.ts';

const ACK = '/_gw/v1/ack';

/** The stored position of a subject's session, read as the hub keys it. */
async function storedPosition(store: MemoryStore, session: string): Promise<string | undefined> {
  const keys = (await store.keys('gw:ack:')).filter((k) => k.endsWith(`:${session}`));
  assert.ok(keys.length <= 1, `one key for ${session}: ${keys}`);
  return keys[0] === undefined ? undefined : store.get(keys[0]);
}

function ack(
  f: HubFixture,
  body: unknown,
  options: { jwt?: string | undefined; contentType?: string; raw?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/json' };
  if (options.jwt !== undefined) headers['authorization'] = `Bearer ${options.jwt}`;
  return fetch(`${f.url}${ACK}`, { method: 'POST', headers, body: options.raw ?? JSON.stringify(body) });
}

describe('POST /_gw/v1/ack', () => {
  const bus = new MemoryBus();
  const store = new MemoryStore();
  let a: HubFixture;
  let b: HubFixture;
  let positions: string[] = [];
  const env = { ACK_REQUESTS_PER_MINUTE: '1000', ACK_MAX_SESSIONS_PER_SUBJECT: '3' };

  before(async () => {
    a = await startHubFixture({ ...env, REPLICA_ID: 'a' }, { bus, store });
    b = await startHubFixture({ ...env, REPLICA_ID: 'b' }, { bus, store });
    positions = [];
    for (let n = 0; n < 40; n++) positions.push(await a.publish('greeting', { name: 'alice', n }));
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await bus.close();
    await store.close();
  });

  it('records a position, and keeps the greater of two (an equal or smaller one is a 204 no-op)', async () => {
    const jwt = a.jwt({ sub: 'forward', iss: 'tests' });
    assert.equal((await ack(a, { session: 'inbox', position: positions[5] }, { jwt })).status, 204);
    assert.equal(await storedPosition(store, 'inbox'), positions[5]);
    assert.equal((await ack(b, { session: 'inbox', position: positions[3] }, { jwt })).status, 204);
    assert.equal((await ack(b, { session: 'inbox', position: positions[5] }, { jwt })).status, 204);
    assert.equal(await storedPosition(store, 'inbox'), positions[5], 'not moved back');
    assert.equal((await ack(b, { session: 'inbox', position: positions[9] }, { jwt })).status, 204);
    assert.equal(await storedPosition(store, 'inbox'), positions[9], 'moved on through the other replica');
    assert.equal(await a.metric('gw_ack_requests_total', 'result="advanced"'), 1);
    assert.equal(await a.metric('gw_ack_requests_total', 'result="unchanged"'), 0);
    assert.equal(await b.metric('gw_ack_requests_total', 'result="unchanged"'), 2);
  });

  it('keeps the sessions of two subjects, and of two issuers with one sub, apart', async () => {
    const one = a.jwt({ sub: 'same', iss: 'issuer-one' });
    const two = a.jwt({ sub: 'same', iss: 'issuer-two' });
    assert.equal(
      (await ack(a, { session: 'shared-name', position: positions[2] }, { jwt: one })).status,
      204,
    );
    assert.equal(
      (await ack(a, { session: 'shared-name', position: positions[1] }, { jwt: two })).status,
      204,
    );
    const keys = (await store.keys('gw:ack:')).filter((k) => k.endsWith(':shared-name'));
    assert.equal(keys.length, 2);
    assert.deepEqual(
      (await Promise.all(keys.map((k) => store.get(k)))).sort(),
      [positions[1], positions[2]].sort(),
    );
    for (const k of keys)
      assert.match(k, /^gw:ack:[A-Za-z0-9_-]{43}:shared-name$/, 'no claim text in the key');
  });

  it('answers each bad request with its status and a text naming what is wrong', async () => {
    const jwt = a.jwt({ sub: 'bad-requests' });
    const good = { session: 'inbox', position: positions[1] };
    const cases: Array<[string, Promise<Response>, number, RegExp]> = [
      ['no JWT', ack(a, good), 401, /Bearer/],
      ['a JWT signed with another key', ack(a, good, { jwt: `${jwt.slice(0, -4)}AAAA` }), 400, /invalid JWT/],
      ['a JWT without sub', ack(a, good, { jwt: a.jwt({ name: 'no-sub' }) }), 400, /sub claim/],
      ['a JWT with a numeric sub', ack(a, good, { jwt: a.jwt({ sub: 7 }) }), 400, /sub claim/],
      [
        'a form, not JSON',
        ack(a, good, { jwt, contentType: 'application/x-www-form-urlencoded' }),
        415,
        /JSON/,
      ],
      [
        'text that is not JSON',
        ack(a, undefined, { jwt, contentType: 'text/plain', raw: 'inbox' }),
        400,
        /JSON/,
      ],
      ['no content type', ack(a, good, { jwt, contentType: '' }), 415, /JSON/],
      ['broken JSON', ack(a, undefined, { jwt, raw: '{"session":' }), 400, /JSON/],
      ['an array', ack(a, [good], { jwt }), 400, /JSON object/],
      ['no session', ack(a, { position: positions[1] }, { jwt }), 400, /^session:/],
      ['an empty session name', ack(a, { ...good, session: '' }, { jwt }), 400, /^session:/],
      [
        'a session name of 65 characters',
        ack(a, { ...good, session: 'x'.repeat(65) }, { jwt }),
        400,
        /^session:/,
      ],
      ['a session name with a slash', ack(a, { ...good, session: 'a/b' }, { jwt }), 400, /^session:/],
      ['a session name with a colon', ack(a, { ...good, session: 'a:b' }, { jwt }), 400, /^session:/],
      ['a numeric position', ack(a, { ...good, position: 5 }, { jwt }), 400, /^position:/],
      ['no position', ack(a, { session: 'inbox' }, { jwt }), 400, /^position:/],
      [
        'an unparseable position',
        ack(a, { ...good, position: 'not-a-position' }, { jwt }),
        400,
        /^position:/,
      ],
      ['an empty position', ack(a, { ...good, position: '' }, { jwt }), 400, /^position:/],
      ['a long position', ack(a, { ...good, position: '1'.repeat(300) }, { jwt }), 400, /^position:/],
      [
        'a position past the head',
        ack(a, { ...good, position: positions[1]!.replace(/^\d+/, '999999') }, { jwt }),
        409,
        /ahead/,
      ],
      ['a position without the stream’s epoch', ack(a, { ...good, position: '1' }, { jwt }), 409, /epoch/],
      ['a body over 1 KiB', ack(a, { ...good, pad: 'x'.repeat(2000) }, { jwt }), 413, /limit/],
    ];
    for (const [what, answer, status, text] of cases) {
      const res = await answer;
      assert.equal(res.status, status, `${what}: ${res.status} ${await res.clone().text()}`);
      assert.match(await res.text(), text, what);
    }
    assert.equal(await storedPosition(store, 'inbox-bad-requests'), undefined);
  });

  it("takes the JWT from a text/plain body's token: a browser's keepalive ack on pagehide, sent without a preflight", async () => {
    // The CORS-safelisted request (a text/plain body, no Authorization) needs no preflight, which
    // Chromium drops with a closing page, and the keepalive request behind it with it.
    const jwt = a.jwt({ sub: 'beacon' });
    const plain = (body: unknown, contentType = 'text/plain;charset=UTF-8') => ack(a, body, { contentType });
    const session = 'beacon';
    assert.equal((await plain({ session, position: positions[4], token: jwt })).status, 204);
    assert.equal(await storedPosition(store, session), positions[4]);
    // application/json with the token in the body is the same request.
    assert.equal(
      (await plain({ session, position: positions[6], token: jwt }, 'application/json')).status,
      204,
    );
    assert.equal(await storedPosition(store, session), positions[6]);
    const cases: Array<[string, Promise<Response>, number, RegExp]> = [
      ['no token and no Authorization', plain({ session, position: positions[7] }), 401, /token/],
      [
        'a token and an Authorization header',
        ack(a, { session, position: positions[7], token: jwt }, { jwt, contentType: 'text/plain' }),
        400,
        /once/,
      ],
      ['a numeric token', plain({ session, position: positions[7], token: 7 }), 400, /^token:/],
      ['an empty token', plain({ session, position: positions[7], token: '' }), 400, /^token:/],
      [
        'a token signed with another key',
        plain({ session, position: positions[7], token: `${jwt.slice(0, -4)}AAAA` }),
        400,
        /^token: invalid JWT/,
      ],
    ];
    for (const [what, answer, status, text] of cases) {
      const res = await answer;
      assert.equal(res.status, status, `${what}: ${res.status} ${await res.clone().text()}`);
      assert.match(await res.text(), text, what);
    }
    assert.equal(await storedPosition(store, session), positions[6], 'no refused ack moved it');
  });

  it("bounds the body's token as the Authorization header is bounded, not by ACK_MAX_BODY_BYTES", async () => {
    // Identity providers' access tokens are often 1–2.5 KB: past ACK_MAX_BODY_BYTES (1 KiB) alone.
    const session = 'long-token';
    const jwt = a.jwt({ sub: 'long-token', roles: 'r'.repeat(1500) });
    assert.ok(jwt.length > 2000);
    const plain = (body: unknown) => ack(a, body, { contentType: 'text/plain' });
    const took = await plain({ session, position: positions[3], token: jwt });
    assert.equal(took.status, 204, await took.text());
    assert.equal(await storedPosition(store, session), positions[3]);
    // The rest of the body is still bounded by ACK_MAX_BODY_BYTES, with or without a token.
    const padded = await plain({ session, position: positions[4], token: jwt, pad: 'x'.repeat(1100) });
    assert.equal(padded.status, 413);
    assert.match(await padded.text(), /limit of 1024 bytes/);
    // And the token as a header value is (MAX_HEADER_VALUE_LENGTH, 16 KiB).
    const huge = await plain({ session, position: positions[4], token: 'x'.repeat(17_000) });
    assert.equal(huge.status, 413);
    assert.match(await huge.text(), /^token: /);
    assert.equal(await storedPosition(store, session), positions[3]);
  });

  it('answers a preflight and refuses other methods', async () => {
    const preflight = await fetch(`${a.url}${ACK}`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    assert.ok(preflight.status === 204 || preflight.status === 200, `preflight: ${preflight.status}`);
    const get = await fetch(`${a.url}${ACK}`);
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST, OPTIONS');
  });

  it('refuses a new session name past ACK_MAX_SESSIONS_PER_SUBJECT with 409, and takes the known ones', async () => {
    const jwt = a.jwt({ sub: 'many-sessions' });
    for (const session of ['s1', 's2', 's3'])
      assert.equal((await ack(a, { session, position: positions[1] }, { jwt })).status, 204);
    const fourth = await ack(b, { session: 's4', position: positions[1] }, { jwt });
    assert.equal(fourth.status, 409);
    assert.match(await fourth.text(), /ACK_MAX_SESSIONS_PER_SUBJECT/);
    assert.equal((await ack(b, { session: 's2', position: positions[2] }, { jwt })).status, 204);
    assert.equal(await storedPosition(store, 's2'), positions[2]);
    const other = a.jwt({ sub: 'someone-else' });
    assert.equal((await ack(a, { session: 's4', position: positions[1] }, { jwt: other })).status, 204);
  });

  it('never moves a position backwards under acks interleaved through two replicas', async () => {
    const jwt = a.jwt({ sub: 'concurrent' });
    let greatest = -1;
    // Rounds of acks of shuffled positions, each round sent at once through both replicas.
    for (let round = 0; round < 8; round++) {
      const picks = Array.from({ length: 24 }, (_, i) => (i * 7 + round * 13) % positions.length);
      const answers = await Promise.all(
        picks.map((p, i) => ack(i % 2 === 0 ? a : b, { session: 'race', position: positions[p] }, { jwt })),
      );
      for (const res of answers) assert.equal(res.status, 204, await res.text());
      greatest = Math.max(greatest, ...picks);
      assert.equal(await storedPosition(store, 'race'), positions[greatest], `after round ${round}`);
    }
  });
});

/** An ack POSTed from the client address `from` (127.0.0.0/8); its status, Retry-After and text. */
function ackFrom(
  f: HubFixture,
  from: string,
  jwt: string,
  body: string,
): Promise<{ status: number; retryAfter: string | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${jwt}` };
    const req = request(
      `${f.url}${ACK}`,
      { method: 'POST', headers, localAddress: from, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], text }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('POST /_gw/v1/ack limits and outage', () => {
  it('answers 429 past ACK_REQUESTS_PER_ADDRESS_PER_MINUTE before it reads the body or the JWT', async () => {
    const f = await startHubFixture({ ACK_REQUESTS_PER_ADDRESS_PER_MINUTE: '4' });
    try {
      const position = await f.publish('greeting', { name: 'alice' });
      const body = JSON.stringify({ session: 'inbox', position });
      // A JWT nobody signed: each one still costs a signature check, so an address gets only so many.
      const forged = `${f.jwt({ sub: 'x' }).slice(0, -4)}AAAA`;
      const flood = [];
      for (let i = 0; i < 6; i++) flood.push((await ackFrom(f, '127.0.0.2', forged, body)).status);
      assert.deepEqual(flood, [400, 400, 400, 400, 429, 429]);
      const over = await ackFrom(f, '127.0.0.2', f.jwt({ sub: 'real' }), body);
      assert.equal(over.status, 429, 'a good JWT from a spent address too');
      assert.ok(Number(over.retryAfter) >= 1);
      assert.equal(over.text, 'Too many acknowledgements from this address; retry later.');
      assert.equal(
        (await ackFrom(f, '127.0.0.3', f.jwt({ sub: 'real' }), body)).status,
        204,
        'another address',
      );
      assert.equal(await f.metric('gw_ack_requests_total', 'result="rate_limited"'), 3);
    } finally {
      await f.stop();
    }
  });

  it('answers 429 with Retry-After past ACK_REQUESTS_PER_MINUTE for the session, and others go on', async () => {
    const f = await startHubFixture({ ACK_REQUESTS_PER_MINUTE: '3' });
    try {
      const position = await f.publish('greeting', { name: 'alice' });
      const jwt = f.jwt({ sub: 'eager' });
      for (let i = 0; i < 3; i++)
        assert.equal((await ack(f, { session: 'inbox', position }, { jwt })).status, 204);
      const over = await ack(f, { session: 'inbox', position }, { jwt });
      assert.equal(over.status, 429);
      assert.ok(Number(over.headers.get('retry-after')) >= 1);
      assert.equal((await ack(f, { session: 'other', position }, { jwt })).status, 204, 'another session');
      assert.equal(await f.metric('gw_ack_requests_total', 'result="rate_limited"'), 1);
    } finally {
      await f.stop();
    }
  });

  it('answers 503 with Retry-After when the store is down', async () => {
    const bus = new MemoryBus();
    const store = new MemoryStore();
    const f = await startHubFixture({}, { bus, store });
    try {
      const position = await f.publish('greeting', { name: 'alice' });
      const jwt = f.jwt({ sub: 'outage' });
      await store.close();
      const res = await ack(f, { session: 'inbox', position }, { jwt });
      assert.equal(res.status, 503, await res.clone().text());
      assert.ok(Number(res.headers.get('retry-after')) >= 1);
    } finally {
      await f.stop();
      await bus.close();
    }
  });
});
