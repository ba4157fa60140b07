/**
 * An attacker's review of acknowledged delivery, through a hub's public port with real JWTs: the
 * bounds the documents give (ACK_MAX_SESSIONS_PER_SUBJECT, ACK_REQUESTS_PER_MINUTE) hold against
 * requests lined up to land together, rotated session names and sessions kept alive past their
 * list's expiry; a replica that has read no event yet still refuses positions past the stream's end;
 * a connect's own `since` is never written as a session's acknowledged position.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '@gatehouse/bus';
import { MemoryStore } from '@gatehouse/store';
import { RedisStore } from '@gatehouse/store/redis';
import { dependencyAddress, openSse, uniqueName, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture, subs } from '../hub-fixture.ts';

function ack(f: HubFixture, jwt: string, session: string, position: string): Promise<Response> {
  return fetch(`${f.url}/_gw/v1/ack`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
    body: JSON.stringify({ session, position }),
  });
}

/**
 * Acks sent together as an attacker lines them up: every request's headers first, then all the
 * bodies in one go, so that the hub handles them at the same moment rather than as they connect.
 */
async function acksAtOnce(f: HubFixture, jwt: string, bodies: unknown[]): Promise<number[]> {
  const sent = bodies.map((body) => {
    const req = request(`${f.url}/_gw/v1/ack`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
    });
    req.flushHeaders();
    const status = new Promise<number>((resolve, reject) => {
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
    });
    return { req, text: JSON.stringify(body), status };
  });
  await new Promise((resolve) => setTimeout(resolve, 200));
  for (const { req, text } of sent) req.end(text);
  return Promise.all(sent.map((s) => s.status));
}

describe('POST /_gw/v1/ack under attack', () => {
  const bus = new MemoryBus();
  let store: RedisStore;
  let hub: HubFixture;
  /** With ACK_REQUESTS_PER_SUBJECT_PER_MINUTE 8. */
  let strict: HubFixture;
  let position = '';

  before(async () => {
    // Real Redis: its round trips let requests sent at once interleave as they do in production.
    store = await RedisStore.connect({
      url: dependencyAddress.redisUrl,
      namespace: `${uniqueName('ack-attacks')}:`,
    });
    const env = { ACK_REQUESTS_PER_MINUTE: '5', ACK_MAX_SESSIONS_PER_SUBJECT: '4' };
    hub = await startHubFixture(env, { bus, store });
    strict = await startHubFixture({ ...env, ACK_REQUESTS_PER_SUBJECT_PER_MINUTE: '8' }, { bus, store });
    position = await hub.publish('greeting', { name: 'alice' });
  });
  after(async () => {
    await hub?.stop();
    await strict?.stop();
    await bus.close();
    if (store) {
      for (const k of await store.keys('')) await store.delete(k);
      await store.close();
    }
  });

  it('holds ACK_MAX_SESSIONS_PER_SUBJECT against 60 new session names acknowledged at once', async () => {
    const jwt = hub.jwt({ sub: 'burst-of-names' });
    const statuses = await acksAtOnce(
      hub,
      jwt,
      Array.from({ length: 60 }, (_, i) => ({ session: `name-${i}`, position })),
    );
    assert.equal(statuses.filter((s) => s === 204).length, 4, `statuses: ${statuses}`);
    assert.equal(statuses.filter((s) => s === 409).length, 56);
    const keys = (await store.keys('gw:ack:')).filter((k) => /:name-\d+$/.test(k));
    assert.equal(keys.length, 4, 'the store holds the bound, not every name');
  });

  it('holds ACK_REQUESTS_PER_MINUTE against a subject that names a new session in every ack', async () => {
    // Each name its own budget: unbounded acks, each past the subject's bound a read of every one
    // of its sessions in the store (ACK_MAX_SESSIONS_PER_SUBJECT + 2 round trips).
    const jwt = hub.jwt({ sub: 'name-rotator' });
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await ack(strict, jwt, `rotated-${i}`, position);
      statuses.push(res.status);
      if (res.status === 429) assert.ok(Number(res.headers.get('retry-after')) >= 1);
      await res.body?.cancel();
    }
    assert.deepEqual(
      statuses,
      [...Array(4).fill(204), ...Array(4).fill(409), ...Array(12).fill(429)],
      'ACK_REQUESTS_PER_SUBJECT_PER_MINUTE (8) over all its names',
    );
    const other = await ack(strict, hub.jwt({ sub: 'someone-else' }), 'rotated-0', position);
    assert.equal(other.status, 204, 'another subject goes on');
  });
});

describe('POST /_gw/v1/ack on a replica that has read no event yet', () => {
  it("refuses a position past the stream's end and one of another epoch, with the buffer not warmed up", async () => {
    const bus = new MemoryBus();
    const store = new MemoryStore();
    // Events on the stream before the replica starts: without warm-up it reads only what comes after.
    const published: string[] = [];
    const seed = await startHubFixture({}, { bus, store });
    for (let n = 0; n < 3; n++) published.push(await seed.publish('greeting', { n }));
    await seed.stop();
    const f = await startHubFixture({ EVENT_BUFFER_WARMUP: 'false' }, { bus, store });
    try {
      const jwt = f.jwt({ sub: 'fresh-replica' });
      const last = published[2]!;
      const far = last.replace(/^\d+/, '999999');
      const answers = {
        sent: (await ack(f, jwt, 'inbox', last)).status,
        far: (await ack(f, jwt, 'inbox', far)).status,
        noEpoch: (await ack(f, jwt, 'inbox', '999999')).status,
      };
      assert.deepEqual(answers, { sent: 204, far: 409, noEpoch: 409 });
    } finally {
      await f.stop();
      await bus.close();
      await store.close();
    }
  });
});

describe('an ack session given its start by a connection that acknowledged nothing', () => {
  const bus = new MemoryBus();
  const store = new MemoryStore();
  let f: HubFixture;
  let first = '';

  before(async () => {
    f = await startHubFixture({ ACK_TIMEOUT: '1s' }, { bus, store });
    first = await f.publish('greeting', { n: 0 });
  });
  after(async () => {
    await f?.stop();
    await bus.close();
    await store.close();
  });

  /** Connects with `since`, lets one event come unacknowledged, and waits for the ack_timeout end. */
  async function timedOut(jwt: string, session: string, since: string): Promise<void> {
    const url = `${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'greeting' }])}`;
    const sse = await openSse(`${url}&jwt=${jwt}&ackSession=${session}&since=${encodeURIComponent(since)}`);
    assert.equal(sse.status, 200, sse.errorBody);
    await waitFor(() => sse.events('gw.connection.create').length === 1, { what: 'the welcome' });
    await f.publish('greeting', { n: 1 });
    await waitFor(() => sse.events('gw.connection_closed').length === 1, {
      what: 'the ack_timeout end',
      timeoutMs: 10_000,
    });
    sse.close();
  }

  /** The acknowledged position a connect with the session is told (its welcome). */
  async function startOf(jwt: string, session: string): Promise<unknown> {
    const url = `${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'greeting' }])}`;
    const sse = await openSse(`${url}&jwt=${jwt}&ackSession=${session}`);
    await waitFor(() => sse.events('gw.connection.create').length === 1, { what: 'the welcome' });
    sse.close();
    return (sse.events('gw.connection.create')[0]!['data'] as { ack: { position: unknown } }).ack.position;
  }

  it('is given a position the connection started at, never the text of its since (ahead, not a position, long)', async () => {
    const jwt = f.jwt({ sub: 'since-writer' });
    const cases = {
      ahead: first.replace(/^\d+/, '99999999'),
      text: 'garbage\nid: x',
      long: '1'.repeat(5000),
    };
    // All at once: each waits out its own ACK_TIMEOUT.
    await Promise.all([
      ...Object.entries(cases).map(([session, since]) => timedOut(jwt, session, since)),
      timedOut(jwt, 'real', first),
    ]);
    for (const session of Object.keys(cases))
      assert.equal(await startOf(jwt, session), null, `${session}: no acknowledged position from its since`);
    assert.equal(await startOf(jwt, 'real'), first, 'a real since is where it started');
  });
});

describe('ACK_MAX_SESSIONS_PER_SUBJECT across ACK_SESSION_TTL', () => {
  it('counts the sessions kept alive by acks after the list of their names would have expired', async () => {
    const bus = new MemoryBus();
    const store = new MemoryStore();
    const f = await startHubFixture(
      { ACK_SESSION_TTL: '3s', ACK_MAX_SESSIONS_PER_SUBJECT: '4' },
      { bus, store },
    );
    try {
      const jwt = f.jwt({ sub: 'keeps-them-alive' });
      const one = await f.publish('greeting', { n: 1 });
      for (let i = 0; i < 4; i++) assert.equal((await ack(f, jwt, `alive-${i}`, one)).status, 204);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      // Each session moved on, so each is kept 3 s from now: all four are held past the list's 3 s.
      const two = await f.publish('greeting', { n: 2 });
      for (let i = 0; i < 4; i++) assert.equal((await ack(f, jwt, `alive-${i}`, two)).status, 204);
      await new Promise((resolve) => setTimeout(resolve, 1800));
      const fifth = await ack(f, jwt, 'one-more', two);
      assert.equal(fifth.status, 409, 'a fifth name while four are held');
    } finally {
      await f.stop();
      await bus.close();
      await store.close();
    }
  });
});
