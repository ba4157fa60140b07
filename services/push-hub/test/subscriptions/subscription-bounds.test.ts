/**
 * How many subscriptions a connection may hold, and how many bytes they may take: a list over
 * MAX_SUBSCRIPTIONS_PER_CONNECTION or MAX_SUBSCRIPTIONS_BYTES (JWT-inferred and manual together,
 * duplicates removed) is refused with a 400 naming the limit, on connect over every transport and
 * on PUT, and nothing of it is applied.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LongPollClient, openSse, openWs, sleep, waitFor } from '@gatehouse/testkit';
import { io } from 'socket.io-client';
import { type HubFixture, startHubFixture, subs } from '../hub-fixture.ts';

const countProblem = (n: number, max: number) =>
  `too many subscriptions: ${n}, at most ${max} per connection (MAX_SUBSCRIPTIONS_PER_CONNECTION)`;
const bytesProblem =
  /^subscriptions too large: \d+ bytes of JSON, at most 2048 per connection \(MAX_SUBSCRIPTIONS_BYTES\)$/;

const types = (...names: string[]) => names.map((eventType) => ({ eventType }));

async function sseConnect(url: string, query: string) {
  const res = await fetch(`${url}/_gw/v1/connection/sse${query}`);
  const text = res.status === 200 ? '' : await res.text();
  if (res.status === 200) await res.body?.cancel();
  return { status: res.status, text };
}

async function put(url: string, transport: string, token: string, list: unknown) {
  const res = await fetch(`${url}/_gw/v1/connection/${transport}/${token}/subscriptions`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ subscriptions: list }),
  });
  return { status: res.status, text: await res.text() };
}

describe('subscription bounds', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture({ MAX_SUBSCRIPTIONS_PER_CONNECTION: '3', MAX_SUBSCRIPTIONS_BYTES: '2048' });
  });
  after(() => f.stop());

  it('refuses an SSE connect over the count, counting JWT-inferred ones and not duplicates', async () => {
    assert.deepEqual(await sseConnect(f.url, `?subscriptions=${subs(types('a', 'b', 'c', 'd'))}`), {
      status: 400,
      text: countProblem(4, 3),
    });
    const jwt = f.jwt({ username: 'ann' });
    assert.deepEqual(await sseConnect(f.url, `?jwt=${jwt}&subscriptions=${subs(types('a', 'b', 'c'))}`), {
      status: 400,
      text: countProblem(4, 3),
    });
    const withDuplicates = [
      ...types('a', 'b', 'a', 'b'),
      { eventType: 'greeting', oneOf: [{ name: 'ann' }] },
    ];
    assert.equal((await sseConnect(f.url, `?jwt=${jwt}&subscriptions=${subs(withDuplicates)}`)).status, 200);
  });

  it('refuses an SSE connect over the bytes', async () => {
    const long = types('x'.repeat(1000), 'y'.repeat(1000));
    const r = await sseConnect(f.url, `?subscriptions=${subs(long)}`);
    assert.equal(r.status, 400);
    assert.match(r.text, bytesProblem);
    assert.equal((await sseConnect(f.url, `?subscriptions=${subs(types('x'.repeat(1000)))}`)).status, 200);
  });

  it('closes a WebSocket connect over a bound with 4400 naming it', async (t) => {
    const ws = openWs(`${f.wsUrl}/_gw/v1/connection/ws?subscriptions=${subs(types('a', 'b', 'c', 'd'))}`);
    t.after(() => ws.ws.close());
    const welcomed = waitFor(() => ws.events.length >= 2, { what: 'a close' }).then(() => ({
      code: 0,
      reason: 'connected',
    }));
    const { code, reason } = await Promise.race([ws.closed, welcomed]);
    assert.equal(code, 4400);
    assert.equal(reason, countProblem(4, 3));
  });

  it('fails a socket.io connect over a bound with connect_error 400 naming it', async (t) => {
    const socket = io(f.url, {
      path: '/_gw/v1/socket.io/',
      auth: { subscriptions: types('a', 'b', 'c', 'd') },
      transports: ['websocket'],
      reconnection: false,
    });
    t.after(() => socket.close());
    const err = await new Promise<Error & { data?: { status: number } }>((resolve) => {
      socket.on('connect_error', resolve);
      socket.on('connect', () => resolve(new Error('connected')));
    });
    assert.equal(err.data?.status, 400);
    assert.equal(err.message, countProblem(4, 3));
  });

  it('refuses a long-poll connect over a bound and makes no connection', async () => {
    const c = new LongPollClient(f.url);
    const r = await c.get(`?subscriptions=${subs(types('a', 'b', 'c', 'd'))}`);
    assert.equal(r.status, 400);
    assert.equal(r.text, countProblem(4, 3));
    assert.equal(c.cookies.size, 0, 'no cookie, no connection');
  });

  it('refuses a PUT over a bound and leaves the SSE connection as it was', async (t) => {
    const sse = await openSse(`${f.url}/_gw/v1/connection/sse?subscriptions=${subs(types('a'))}`);
    t.after(() => sse.close());
    await waitFor(() => sse.frames.length >= 2, { what: 'the welcome events' });
    const token = (sse.events('gw.connection.create')[0]!['data'] as { connection_token: string })
      .connection_token;
    assert.deepEqual(await put(f.url, 'sse', token, types('b', 'c', 'd', 'e')), {
      status: 400,
      text: `cannot accept subscription request: ${countProblem(4, 3)}`,
    });
    const tooLong = await put(f.url, 'sse', token, types('b'.repeat(1100), 'c'.repeat(1100)));
    assert.equal(tooLong.status, 400);
    assert.match(tooLong.text.replace(/^cannot accept subscription request: /, ''), bytesProblem);
    await f.publish('b', {});
    await f.publish('a', { still: true });
    await waitFor(() => sse.events('a').length === 1, { what: 'an event of the old subscriptions' });
    assert.equal(sse.events('b').length, 0);
    assert.equal(sse.events('gw.subscriptions_set').length, 1, 'no change was announced');
  });

  it('refuses a long-poll PUT over a bound and keeps the record', async () => {
    const c = new LongPollClient(f.url);
    await c.get(`?subscriptions=${subs(types('a'))}`);
    const welcome = await c.poll();
    const token = (welcome[0]!['data'] as { connection_token: string }).connection_token;
    assert.equal((await put(f.url, 'longpolling', token, types('b', 'c', 'd', 'e'))).status, 400);
    await f.publish('b', {});
    await f.publish('a', { n: 1 });
    await sleep(50);
    const events = await c.poll();
    assert.deepEqual(
      events.map((e) => e['type']),
      ['a'],
      'no gw.subscriptions_set, and the old subscriptions still filter',
    );
  });
});

describe('subscription bounds by default', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture();
  });
  after(() => f.stop());

  it('allows 128 subscriptions per connection, as Centrifugo allows 128 channels', async () => {
    const many = (n: number) => types(...Array.from({ length: n }, (_, i) => `t${i}`));
    assert.equal((await sseConnect(f.url, `?subscriptions=${subs(many(128))}`)).status, 200);
    assert.deepEqual(await sseConnect(f.url, `?subscriptions=${subs(many(129))}`), {
      status: 400,
      text: countProblem(129, 128),
    });
  });

  it('allows 32 KiB of subscriptions: 128 of about 256 bytes each', async () => {
    // {"eventType":"…","oneOf":[]} is 27 bytes plus the type; the list adds commas and brackets:
    // 128 types of 227 characters make 32,641 bytes, of 228 characters 32,769.
    const sized = (typeLength: number) =>
      types(...Array.from({ length: 128 }, (_, i) => `${i}`.padStart(typeLength, 'x')));
    const fits = await sseConnect(f.url, `?subscriptions=${subs(sized(227))}`);
    assert.equal(fits.status, 200, fits.text);
    const over = await sseConnect(f.url, `?subscriptions=${subs(sized(228))}`);
    assert.equal(over.status, 400);
    assert.match(over.text, /at most 32768 per connection \(MAX_SUBSCRIPTIONS_BYTES\)$/);
  });
});
