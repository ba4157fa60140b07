/**
 * The application's mistakes, against the real gateway: a listener that throws does not cost the
 * connection (it is reported as an `error` event, or on the console when nobody listens for those),
 * and options that cannot work fail at once, by name, instead of leaving the client connecting for
 * ever. `on()` gives back its own unsubscribe; `once()` listens for one event.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { sleep, waitFor } from '@gatehouse/testkit';
import { type ConnectionState, Gatehouse, GatehouseError, type TransportName } from '../src/index.ts';
import { connected, range, record, useGatewayFixture } from './gateway-fixture.ts';

const subscriptions = [{ eventType: 'order.updated' }];

describe('a listener that throws', () => {
  const gateway = useGatewayFixture();

  for (const transport of ['websocket', 'sse', 'longpolling'] as const satisfies TransportName[]) {
    it(`${transport}: keeps the connection; every event still reaches the other listeners; each failure is an error event`, async () => {
      const gw = gateway.client({ transports: [transport], subscriptions });
      const got = record(gw);
      const failures: GatehouseError[] = [];
      gw.on('event', () => {
        throw new Error('the application broke');
      });
      gw.on('error', (err) => failures.push(err));
      await connected(gw);
      await gw.subscribe(subscriptions);
      const accepted = gateway.fx.proxy.acceptedAt.length;
      const base = 100 * (transport.length + 1);
      for (const n of range(base + 1, base + 10)) await gateway.fx.publish(n);
      await waitFor(() => got.ns.length === 10, {
        timeoutMs: 20_000,
        what: `10 events (got ${got.ns.length})`,
      });
      await sleep(300);
      assert.deepEqual(got.ns, range(base + 1, base + 10));
      assert.equal(failures.length, 10);
      assert.ok(failures.every((f) => f instanceof GatehouseError && f.code === 'listener_failed'));
      assert.equal((failures[0]!.cause as Error).message, 'the application broke');
      assert.deepEqual(
        got.states.filter((s) => s.state !== 'connected' && s.state !== 'connecting'),
        [],
        'the connection was never dropped',
      );
      // Long-polling makes a request per poll, through the same keep-alive connection or a new one;
      // the streams made exactly one.
      if (transport !== 'longpolling') assert.equal(gateway.fx.proxy.acceptedAt.length, accepted);
      gw.close();
    });
  }

  it('without an error listener, goes to the console and the events go on', async () => {
    const gw = gateway.client({ transports: ['websocket'], subscriptions });
    const got = record(gw);
    gw.on('event', () => {
      throw new Error('nobody listens for errors');
    });
    const logged: unknown[][] = [];
    const consoleError = console.error;
    console.error = (...args: unknown[]) => void logged.push(args);
    try {
      await connected(gw);
      await gw.subscribe(subscriptions);
      for (const n of range(901, 903)) await gateway.fx.publish(n);
      await waitFor(() => got.ns.length === 3, { timeoutMs: 20_000, what: '3 events' });
    } finally {
      console.error = consoleError;
    }
    assert.equal(logged.length, 3);
    assert.ok(logged.every((args) => args.some((a) => a instanceof GatehouseError)));
    assert.equal(gw.state.state, 'connected');
    gw.close();
  });

  it('on() gives back its unsubscribe, and once() hears one event', async () => {
    const gw = gateway.client({ transports: ['sse'], subscriptions });
    const got = record(gw);
    const seen: number[] = [];
    const firstOnly: number[] = [];
    const stop = gw.on('event', (e) => seen.push((e.data as { n: number }).n));
    gw.once('event', (e) => firstOnly.push((e.data as { n: number }).n));
    await connected(gw);
    await gw.subscribe(subscriptions);
    await gateway.fx.publish(951);
    await gateway.fx.publish(952);
    await waitFor(() => got.ns.length === 2, { timeoutMs: 20_000, what: '2 events' });
    stop();
    await gateway.fx.publish(953);
    await waitFor(() => got.ns.length === 3, { timeoutMs: 20_000, what: '3 events' });
    assert.deepEqual(seen, [951, 952]);
    assert.deepEqual(firstOnly, [951]);
    gw.close();
  });
});

describe('options that cannot work', () => {
  it('an unknown transport name is refused at once, naming the known ones', () => {
    assert.throws(
      () => new Gatehouse('http://127.0.0.1:9', { transports: ['ws' as TransportName] }),
      (err: Error) =>
        err instanceof TypeError &&
        /'ws'/.test(err.message) &&
        /websocket, sse, longpolling/.test(err.message),
    );
  });

  it('a URL that is not absolute, where no page gives it a base, is refused at once', () => {
    assert.throws(
      () => new Gatehouse('/'),
      (err: Error) => err instanceof TypeError && /absolute/.test(err.message),
    );
    assert.throws(() => new Gatehouse('ftp://gw.example.com'), /http or https/);
  });

  it('backoff bounds that would retry in a busy loop are refused at once', () => {
    for (const backoff of [{ initialMs: 0 }, { initialMs: -1 }, { initialMs: Number.NaN }, { maxMs: 10 }])
      assert.throws(
        () => new Gatehouse('http://127.0.0.1:9', { backoff }),
        RangeError,
        JSON.stringify(backoff),
      );
  });
});

describe('why a connection failed', () => {
  it('a gateway nobody answers for: code network, the platform error as cause, its reason in words', async () => {
    // A port nothing listens on (bound, then closed): every connect is refused.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    for (const transport of ['sse', 'longpolling', 'websocket'] as const) {
      const gw = new Gatehouse(`http://127.0.0.1:${port}`, {
        transports: [transport],
        backoff: { initialMs: 50 },
      });
      try {
        const states: ConnectionState[] = [];
        gw.on('state', (s) => states.push(s));
        await waitFor(() => states.some((s) => s.state === 'reconnecting'), { timeoutMs: 10_000 });
        const failed = states.find((s) => s.state === 'reconnecting')!;
        assert.equal(failed.state === 'reconnecting' && failed.code, 'network', JSON.stringify(failed));
        // fetch says only "fetch failed"; why is in its cause (a WebSocket tells nothing more).
        if (transport !== 'websocket') {
          assert.match((failed as { reason: string }).reason, /ECONNREFUSED/);
          assert.ok((failed as { cause?: unknown }).cause instanceof Error);
        }
      } finally {
        gw.close();
      }
      assert.equal(gw.state.state === 'closed' && gw.state.code, 'closed_by_client');
    }
  });
});
