/**
 * Nesting depth at the hub. A subscription list nested deeper than MAX_JSON_DEPTH is refused with
 * 400 at connect and on PUT. An event nested far deeper than that which reaches the fan-out stream
 * without the publisher (a backend writing to the broker) is matched without walking its depth: a
 * constraint on the deep field does not match it, everyone else gets it, and it stops nothing (the
 * next events, a constrained resume across it, a constrained long-poll whose cursor must pass it).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LongPollClient, openSse, waitFor } from '@gatehouse/testkit';
import WebSocket from 'ws';
import { type HubFixture, startHubFixture, subs } from './hub-fixture.ts';

/** Far deeper than any limit, and deeper than a recursive walk survives (about 3,000 levels). */
const DEPTH = 10_000;
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

/** A `greeting` whose `name` (the extractor field) is nested DEPTH levels, as JSON text. */
const deepGreeting = (id: string) =>
  `{"specversion":"1.0","id":"${id}","source":"backend","type":"greeting","data":{"name":${nested(DEPTH)}}}`;

describe('nesting depth at the hub', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture({ LONGPOLL_TIMEOUT: '700ms', MAX_JSON_DEPTH: '32' });
  });
  after(() => f.stop());

  const bob = subs([{ eventType: 'greeting', oneOf: [{ name: 'bob' }] }]);
  const putDeep = () => f.bus.publish('gw.events', { value: deepGreeting(crypto.randomUUID()) });

  it('delivers a deep event to unconstrained subscribers, to no constrained one, and the next ones to all', async () => {
    // The constrained connection first: its match runs before the unconstrained one's.
    const constrained = await openSse(`${f.url}/_gw/v1/connection/sse?subscriptions=${bob}`);
    const everyone = await openSse(
      `${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'greeting' }])}`,
    );
    try {
      await waitFor(() => constrained.frames.length >= 2 && everyone.frames.length >= 2);
      await putDeep();
      await f.publish('greeting', { name: 'bob' });
      await waitFor(() => everyone.events('greeting').length === 2, { what: 'both events, deep one first' });
      assert.equal(everyone.frames.at(-2)!.data.length > DEPTH * 2, true, 'the deep event as it came');
      await waitFor(() => constrained.events('greeting').length === 1, { what: "bob's event" });
      assert.deepEqual(constrained.events('greeting')[0]!['data'], { name: 'bob' });
    } finally {
      constrained.close();
      everyone.close();
    }
  });

  it('writes a deep event with line breaks between its tokens as one SSE data line', async () => {
    const sse = await openSse(
      `${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'greeting' }])}`,
    );
    try {
      await waitFor(() => sse.frames.length >= 2);
      const id = crypto.randomUUID();
      await f.bus.publish('gw.events', { value: deepGreeting(id).replace('"data":', '"data":\r\n') });
      await f.publish('greeting', { name: 'next' });
      await waitFor(() => sse.events('greeting').length === 2, { what: 'the deep event and the next one' });
      const deep = sse.frames.find((fr) => fr.event === 'greeting')!;
      assert.equal(deep.data.includes('\n'), false, 'one data line');
      assert.equal((JSON.parse(deep.data) as Record<string, unknown>)['id'], id);
    } finally {
      sse.close();
    }
  });

  it('resumes a constrained connection across a deep event', async () => {
    const first = await openSse(`${f.url}/_gw/v1/connection/sse?subscriptions=${bob}`);
    await waitFor(() => first.frames.length >= 2);
    await f.publish('greeting', { name: 'bob', n: 1 });
    await waitFor(() => first.events('greeting').length === 1);
    const lastId = first.frames.at(-1)!.id!;
    first.close();
    await putDeep();
    await f.publish('greeting', { name: 'bob', n: 2 });
    const again = await openSse(`${f.url}/_gw/v1/connection/sse?subscriptions=${bob}`, {
      'last-event-id': lastId,
    });
    try {
      assert.equal(again.status, 200);
      await waitFor(() => again.events('greeting').length === 1, { what: 'the event after the deep one' });
      assert.deepEqual(again.events('greeting')[0]!['data'], { name: 'bob', n: 2 });
    } finally {
      again.close();
    }
  });

  it('answers a constrained long-poll 200 and moves its cursor past a deep event', async () => {
    const c = new LongPollClient(f.url);
    assert.equal((await c.get(`?subscriptions=${bob}`)).status, 200);
    await c.poll(); // the welcome events
    await putDeep();
    await f.publish('greeting', { name: 'bob', n: 3 });
    const answered = await c.get();
    assert.equal(answered.status, 200, answered.text);
    const events = (answered.body as { events: Array<Record<string, unknown>> }).events;
    assert.deepEqual(
      events.map((e) => e['data']),
      [{ name: 'bob', n: 3 }],
    );
    await f.publish('greeting', { name: 'bob', n: 4 });
    assert.deepEqual(
      (await c.poll()).map((e) => e['data']),
      [{ name: 'bob', n: 4 }],
      'the next poll starts after both',
    );
  });

  it('refuses a subscription list nested deeper than MAX_JSON_DEPTH at connect and on PUT', async () => {
    let constraint: unknown = 'bob';
    for (let i = 0; i < 40; i++) constraint = [constraint];
    const deep = subs([{ eventType: 'greeting', oneOf: [{ name: constraint }] }]);
    const sse = await openSse(`${f.url}/_gw/v1/connection/sse?subscriptions=${deep}`);
    assert.equal(sse.status, 400);
    assert.match(sse.errorBody ?? '', /^invalid subscriptions: .*MAX_JSON_DEPTH \(32\)/);

    const c = new LongPollClient(f.url);
    assert.equal((await c.get('?subscriptions=[]')).status, 200);
    const token = c.cookies.get('connection_token')!;
    const put = await fetch(`${f.url}/_gw/v1/connection/longpolling/${token}/subscriptions`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ subscriptions: [{ eventType: 'greeting', oneOf: [{ name: constraint }] }] }),
    });
    assert.equal(put.status, 400);
    assert.match(
      await put.text(),
      /^cannot accept subscription request: could not parse given subscriptions: .*MAX_JSON_DEPTH \(32\)/,
    );
    // Within the limit, the same shape is accepted.
    let shallow: unknown = 'bob';
    for (let i = 0; i < 20; i++) shallow = [shallow];
    const ok = await openSse(
      `${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'greeting', oneOf: [{ name: shallow }] }])}`,
    );
    assert.equal(ok.status, 200);
    ok.close();
  });

  it('refuses a socket.io handshake whose decoded subscriptions nest thousands of levels with 400', async () => {
    // Raw engine.io: socket.io-client would not encode so deep a value (JSON.stringify throws).
    const socket = new WebSocket(`${f.wsUrl}/_gw/v1/socket.io/?EIO=4&transport=websocket`);
    const received: string[] = [];
    socket.on('message', (data) => {
      const text = data.toString();
      received.push(text);
      if (text.startsWith('0')) socket.send(`40{"subscriptions":${nested(DEPTH)}}`);
    });
    try {
      await waitFor(() => received.some((m) => m.startsWith('44')), { what: 'the connect error' });
      const refusal = JSON.parse(received.find((m) => m.startsWith('44'))!.slice(2)) as {
        message: string;
        data: { status: number };
      };
      assert.equal(refusal.data.status, 400);
      assert.match(refusal.message, /^invalid subscriptions: .*MAX_JSON_DEPTH \(32\)/);
    } finally {
      socket.close();
    }
  });
});
