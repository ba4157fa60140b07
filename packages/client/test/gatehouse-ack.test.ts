/**
 * Acknowledged delivery through the real gateway (ACK_TIMEOUT 1 s): what the application handled
 * is acknowledged, so a client of the same ack session after close() gets exactly the rest, on
 * every transport; an event whose listener threw (or rejected) comes again after the gateway's bound and the
 * others do not; a copy that comes while its event is still being handled is dropped; manual mode
 * acknowledges only what `ack(event)` was called for; events of other types count as handled.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor } from '@gatehouse/testkit';
import { type CloudEvent, Gatehouse, type GatehouseError, type TransportName } from '../src/index.ts';
import { connected, jwt, range, record, useGatewayFixture } from './gateway-fixture.ts';

const subscriptions = [{ eventType: 'order.updated' }, { eventType: 'note.added' }];
const transports = ['websocket', 'sse', 'longpolling'] as const;
const never = () => new Promise<void>(() => {});
const nOf = (e: CloudEvent) => (e.data as { n: number }).n;

/**
 * A request a browser sends cross-origin without a CORS preflight (Fetch, "CORS-safelisted"): GET,
 * HEAD or POST, no header but the safelisted ones, a content type of a form or of text (a string
 * body without one is sent as text/plain).
 */
function corsSafelisted(init: RequestInit | undefined): boolean {
  const method = (init?.method ?? 'GET').toUpperCase();
  if (!['GET', 'HEAD', 'POST'].includes(method)) return false;
  for (const [name, value] of new Headers(init?.headers).entries()) {
    if (['accept', 'accept-language', 'content-language'].includes(name)) continue;
    const type = value.split(';')[0]!.trim().toLowerCase();
    const formOrText = ['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'];
    if (name === 'content-type' && formOrText.includes(type)) continue;
    return false;
  }
  return init?.body === undefined || typeof init.body === 'string';
}

describe('Gatehouse with acknowledged delivery', () => {
  const gateway = useGatewayFixture({ SUBSCRIPTION_CHECK: 'jwt_validation', ACK_TIMEOUT: '1s' });

  /** A client of the ack session `session` of the subject `sub`. */
  const client = (
    transport: TransportName,
    sub: string,
    ack: { session: string } & Record<string, unknown>,
  ) => gateway.client({ subscriptions, transports: [transport], token: jwt({ sub }), ack });

  /** Publishes events and waits until the client got the last of them. */
  const publish = async (got: { ns: number[] }, ns: number[], type?: string) => {
    for (const n of ns) await gateway.fx.publish(n, type);
    await waitFor(() => got.ns.includes(ns.at(-1)!), { timeoutMs: 20_000, what: `event ${ns.at(-1)}` });
  };

  /** The ack_timeout reconnects a client made. */
  const ackTimeouts = (got: ReturnType<typeof record>) =>
    got.states.filter((s) => s.state === 'reconnecting' && s.reason.includes('ack_timeout')).length;

  for (const transport of transports) {
    it(`${transport}: after close(), a client of the same session gets exactly what was not handled`, async () => {
      const base = 100 * (transports.indexOf(transport) + 1);
      const sub = `rest-${transport}`;
      const first = client(transport, sub, { session: 'inbox' });
      const got = record(first);
      // Handled up to base+3; base+4 and base+5 stay in handling.
      first.on('event', (e) => (nOf(e) > base + 3 ? never() : undefined));
      await connected(first);
      await publish(got, range(base + 1, base + 3));
      await publish(got, range(base + 4, base + 5));
      await first.close();
      const second = client(transport, sub, { session: 'inbox' });
      const again = record(second);
      await waitFor(() => again.ns.includes(base + 5), { timeoutMs: 20_000, what: 'the rest' });
      assert.deepEqual(again.ns, [base + 4, base + 5]);
      assert.deepEqual(got.ns, range(base + 1, base + 5));
    });
  }

  for (const transport of transports) {
    // Over SSE the listener's promise rejects; elsewhere it throws.
    const how = transport === 'sse' ? 'rejected' : 'threw';
    it(`${transport}: an event whose listener ${how} comes again after ACK_TIMEOUT, the others once`, async () => {
      const base = 1000 * (transports.indexOf(transport) + 1);
      const gw = client(transport, `throws-${transport}`, { session: 'inbox' });
      const got = record(gw);
      const errors: GatehouseError[] = [];
      gw.on('error', (err) => errors.push(err));
      let thrown = false;
      gw.on('event', (e) => {
        if (nOf(e) !== base + 2 || thrown) return;
        thrown = true;
        if (how === 'rejected') return Promise.reject(new Error('not this time'));
        throw new Error('not this time');
      });
      await connected(gw);
      // One at a time, so a long-poll answer holds one event and its position is the event's.
      for (const n of range(base + 1, base + 4)) await publish(got, [n]);
      await waitFor(() => got.ns.filter((n) => n === base + 2).length === 2, {
        timeoutMs: 20_000,
        what: 'the failed event again',
      });
      await publish(got, [base + 5]);
      assert.deepEqual(got.ns, [...range(base + 1, base + 4), base + 2, base + 5]);
      assert.ok(ackTimeouts(got) >= 1, 'the gateway ended the connection for the missing ack');
      assert.deepEqual(
        errors.map((e) => e.code),
        ['listener_failed'],
      );
    });
  }

  it('an event whose listener always fails is given up after maxAttempts: event_given_up, and the session moves on', async () => {
    const gw = client('websocket', 'always-fails', { session: 'inbox', maxAttempts: 2 });
    const got = record(gw);
    const errors: GatehouseError[] = [];
    gw.on('error', (err) => errors.push(err));
    gw.on('event', (e) => {
      if (nOf(e) === 4002) throw new Error('never this one');
    });
    await connected(gw);
    await publish(got, [4001, 4002, 4003]);
    await waitFor(() => errors.some((e) => e.code === 'event_given_up'), {
      timeoutMs: 20_000,
      what: 'the event given up',
    });
    assert.deepEqual(
      errors.map((e) => e.code),
      ['listener_failed', 'listener_failed', 'event_given_up'],
    );
    assert.match(errors[2]!.message, /e-4002/);
    assert.equal((errors[2]!.cause as CloudEvent).id, 'e-4002', 'the event given up is the cause');
    await gw.close();
    assert.deepEqual(got.ns, [4001, 4002, 4003, 4002], 'handed over twice, then given up');
    // The session's position is past it: a client of the session next gets only what comes after.
    const next = client('websocket', 'always-fails', { session: 'inbox' });
    const again = record(next);
    await connected(next);
    await publish(again, [4004]);
    assert.deepEqual(again.ns, [4004]);
  });

  it('beyond maxPending events held behind one not handled, that one is given up and the session moves on', async () => {
    const gw = client('sse', 'pending', { session: 'inbox', manual: true, maxPending: 3 });
    const got = record(gw);
    const errors: GatehouseError[] = [];
    gw.on('error', (err) => errors.push(err));
    // Every event acknowledged but the first: it holds the position back, the others pile up behind it.
    gw.on('event', (e) => {
      if (nOf(e) !== 4101) gw.ack(e);
    });
    await connected(gw);
    await publish(got, [4101, 4102, 4103]);
    assert.equal(errors.length, 0, 'three held: at the bound, not past it');
    await publish(got, [4104]);
    assert.deepEqual(
      errors.map((e) => [e.code, (e.cause as CloudEvent).id]),
      [['event_given_up', 'e-4101']],
    );
    await gw.close();
    const next = client('sse', 'pending', { session: 'inbox', manual: true });
    const again = record(next);
    next.on('event', (e) => next.ack(e));
    await connected(next);
    await publish(again, [4105]);
    assert.deepEqual(again.ns, [4105], 'nothing held back any more');
  });

  it('a copy that comes while its event is still being handled (a late ack) is dropped', async () => {
    const gw = client('websocket', 'late', { session: 'inbox' });
    const got = record(gw);
    let finish = () => {};
    gw.on('event', (e) => (nOf(e) === 5001 ? new Promise<void>((resolve) => (finish = resolve)) : undefined));
    await connected(gw);
    await publish(got, [5001]);
    await waitFor(() => ackTimeouts(got) >= 1 && gw.state.state === 'connected', {
      timeoutMs: 20_000,
      what: 'the gateway redelivering',
    });
    // The copy comes right after the welcome, before event 2.
    await publish(got, [5002]);
    finish();
    await publish(got, [5003]);
    assert.deepEqual(got.ns, [5001, 5002, 5003]);
  });

  it('manual: only what ack(event) was called for is acknowledged', async () => {
    const first = client('sse', 'manual', { session: 'inbox', manual: true });
    const got = record(first);
    first.on('event', (e) => {
      if (nOf(e) !== 6002) first.ack(e);
    });
    await connected(first);
    await publish(got, [6001]);
    await publish(got, [6002]);
    await publish(got, [6003]);
    await first.close();
    const second = client('sse', 'manual', { session: 'inbox', manual: true });
    const again = record(second);
    second.on('event', (e) => second.ack(e));
    await waitFor(() => again.ns.includes(6003), { timeoutMs: 20_000, what: 'the rest' });
    assert.deepEqual(again.ns, [6002, 6003]);
  });

  it('events of types the application does not acknowledge count as handled once delivered', async () => {
    const first = client('websocket', 'types', { session: 'orders', types: ['order.*'] });
    const got = record(first);
    first.on('event', never);
    await connected(first);
    await publish(got, [7001, 7002], 'note.added');
    await publish(got, [7003]);
    await first.close();
    const second = client('websocket', 'types', { session: 'orders', types: ['order.*'] });
    const again = record(second);
    await waitFor(() => again.ns.includes(7003), { timeoutMs: 20_000, what: 'the order event' });
    assert.deepEqual(again.ns, [7003], 'the notes were handled, the order event was not');
  });

  it("the page's pagehide tells the gateway the position at once, with keepalive", async (t) => {
    // A window as a browser page has one: the client listens to it when it has navigator.onLine.
    const page = new EventTarget();
    const g = globalThis as unknown as Record<string, unknown>;
    const realFetch = globalThis.fetch;
    const acks: Array<{ keepalive: boolean | undefined; status: number; safelisted: boolean }> = [];
    g['addEventListener'] = page.addEventListener.bind(page);
    g['removeEventListener'] = page.removeEventListener.bind(page);
    Object.defineProperty(navigator, 'onLine', { value: true, configurable: true });
    globalThis.fetch = async (input, init) => {
      const res = await realFetch(input, init);
      if (String(input).endsWith('/_gw/v1/ack'))
        acks.push({ keepalive: init?.keepalive, status: res.status, safelisted: corsSafelisted(init) });
      return res;
    };
    t.after(() => {
      globalThis.fetch = realFetch;
      delete g['addEventListener'];
      delete g['removeEventListener'];
      delete (navigator as unknown as Record<string, unknown>)['onLine'];
    });
    const first = client('sse', 'pagehide', { session: 'inbox', manual: true });
    const got = record(first);
    await connected(first);
    await publish(got, [8001]);
    await publish(got, [8002]);
    // Acknowledged, and the page goes in the same turn: before the batch's 100 ms are up.
    first.ack(got.events[0]!);
    page.dispatchEvent(new Event('pagehide'));
    await waitFor(() => acks.some((a) => a.keepalive === true), {
      timeoutMs: 20_000,
      what: 'the keepalive ack',
    });
    assert.deepEqual(
      acks.filter((a) => a.keepalive),
      [{ keepalive: true, status: 204, safelisted: true }],
      'sent as a CORS-safelisted request: a preflight would be dropped with the closing page (Chromium)',
    );
    const second = client('sse', 'pagehide', { session: 'inbox' });
    const again = record(second);
    await waitFor(() => again.ns.includes(8002), { timeoutMs: 20_000, what: 'the rest' });
    assert.deepEqual(again.ns, [8002]);
  });

  it('pagehide does not wait for an ack under way: the page has no later turn to send in', async (t) => {
    const page = new EventTarget();
    const g = globalThis as unknown as Record<string, unknown>;
    const realFetch = globalThis.fetch;
    const token = jwt({ sub: 'pagehide-busy' });
    // This client's acks only: clients of earlier tests still acknowledge what they get.
    const acks: Array<{ keepalive: boolean | undefined; position: string }> = [];
    g['addEventListener'] = page.addEventListener.bind(page);
    g['removeEventListener'] = page.removeEventListener.bind(page);
    Object.defineProperty(navigator, 'onLine', { value: true, configurable: true });
    // The batch's ack is sent, and the network holds it: the page closing would cancel it.
    globalThis.fetch = (input, init) => {
      if (!String(input).endsWith('/_gw/v1/ack')) return realFetch(input, init);
      const body = JSON.parse(String(init?.body)) as { position: string; token?: string };
      if (body.token !== token) return realFetch(input, init);
      const { position } = body;
      acks.push({ keepalive: init?.keepalive, position });
      return init?.keepalive ? realFetch(input, init) : new Promise<Response>(() => {});
    };
    t.after(() => {
      globalThis.fetch = realFetch;
      delete g['addEventListener'];
      delete g['removeEventListener'];
      delete (navigator as unknown as Record<string, unknown>)['onLine'];
    });
    const first = gateway.client({
      subscriptions,
      transports: ['sse'],
      token,
      ack: { session: 'inbox', manual: true },
    });
    const got = record(first);
    await connected(first);
    await publish(got, [8101, 8102, 8103]);
    first.ack(got.events[0]!);
    await waitFor(() => acks.length === 1, { timeoutMs: 20_000, what: 'the batch ack under way' });
    first.ack(got.events[1]!);
    page.dispatchEvent(new Event('pagehide'));
    // Only what runs before the page's next task: its microtasks.
    for (let i = 0; i < 20; i++) await null;
    assert.deepEqual(
      acks.map((a) => a.keepalive),
      [false, true],
      'the keepalive ack went in the pagehide turn',
    );
    const second = client('sse', 'pagehide-busy', { session: 'inbox' });
    const again = record(second);
    await waitFor(() => again.ns.includes(8103), { timeoutMs: 20_000, what: 'the rest' });
    assert.deepEqual(again.ns, [8103]);
  });

  it('needs a token', () => {
    assert.throws(() => new Gatehouse('http://127.0.0.1:1', { ack: { session: 'inbox' } }), {
      name: 'TypeError',
      message: /ack needs a token/,
    });
  });

  it('refuses bounds on held events that would give every event up or bound nothing', () => {
    for (const limits of [
      { maxAttempts: 0 },
      { maxPending: 0 },
      { maxAttempts: Number.NaN },
      { maxPending: -1 },
    ]) {
      const options = { token: jwt(), ack: { session: 'inbox', ...limits } };
      // A client made all the same is closed at once: the test fails, it does not hang.
      assert.throws(() => void new Gatehouse('http://127.0.0.1:1', options).close(), {
        name: 'RangeError',
        message: new RegExp(`ack.${Object.keys(limits)[0]}`),
      });
    }
  });

  it("ends with the gateway's 400 for a session name it does not take", async () => {
    const gw = client('sse', 'bad-name', { session: 'in box' });
    await waitFor(() => gw.state.state === 'closed', { timeoutMs: 20_000, what: 'closed' });
    assert.equal((gw.state as { status?: number }).status, 400);
    assert.match((gw.state as { reason: string }).reason, /ackSession/);
  });
});

describe('Gatehouse with an ack session the gateway refuses', () => {
  const gateway = useGatewayFixture({
    SUBSCRIPTION_CHECK: 'jwt_validation',
    ACK_MAX_SESSIONS_PER_SUBJECT: '1',
  });

  it("says so with an 'ack_refused' error, the gateway's status and reason in its message", async () => {
    const token = jwt({ sub: 'many-sessions' });
    const open = async (session: string, n: number) => {
      const gw = gateway.client({ subscriptions, transports: ['sse'], token, ack: { session } });
      const errors: GatehouseError[] = [];
      gw.on('error', (err) => errors.push(err));
      const got = record(gw);
      await connected(gw);
      await gateway.fx.publish(n);
      await waitFor(() => got.ns.includes(n), { timeoutMs: 20_000, what: `event ${n}` });
      await gw.close();
      return errors;
    };
    assert.deepEqual(await open('one', 9001), [], 'the first session is taken');
    const errors = await open('two', 9002);
    assert.deepEqual(
      errors.map((e) => e.code),
      ['ack_refused'],
    );
    assert.match(errors[0]!.message, /409 .*ACK_MAX_SESSIONS_PER_SUBJECT|409 .*sessions/);
  });
});
