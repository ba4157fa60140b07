/**
 * Acknowledged at-least-once delivery (docs/client.md "Acknowledged delivery", the `ack` option of
 * `@gatehouse/client`) from two push-hub processes on a real Kafka fan-out stream, with the ack
 * sessions kept in Redis and ACK_TIMEOUT at 2 s. What the application's `event` listener handled is
 * counted, per event: lost (never handled) and duplicated (handled twice) must both be 0 when
 * - a tab is closed mid-batch: it handled k of n events; a new client with the same session on the
 *   other replica gets exactly the other n − k;
 * - the replica a client receives from is SIGKILLed: the client comes back on the other one (through
 *   one address in front of both, as behind a load balancer) and no event is handled twice or never;
 * - the application acknowledges late (a handler slower than ACK_TIMEOUT): the gateway redelivers,
 *   the client drops what is handled or still being handled;
 * - a listener throws once: that event is handed again after the redelivery, nothing else is; also
 *   when it is the first event of a new session (the store holds no position of it yet).
 * After each, a new event (the sentinel) shows where the session stands: a client that comes next
 * with the same session gets it and nothing before it. The transports differ between the cases.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signJwt, withExpiry } from '@gatehouse/auth';
import { KafkaBus } from '@gatehouse/bus/all';
import { type CloudEvent, type ConnectionState, Gatehouse, type TransportName } from '@gatehouse/client';
import {
  dependencyAddress,
  exitAfterFileWhenHung,
  type ServiceProcess,
  sleep,
  uniqueName,
  waitFor,
} from '@gatehouse/testkit';
import { FailoverFront } from '../src/failover-front.ts';
import { hubSlots, kafkaHubEnv, startHub } from '../src/hub-pair.ts';

after(() => exitAfterFileWhenHung());

const jwtSecret = 'acknowledged-delivery-secret-long-enough-for-hs256';
const numberOf = (event: CloudEvent) => (event.data as { n: number }).n;
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

/** What the application handled: how often its listener finished with each event number. */
class Application {
  readonly handled = new Map<number, number>();
  /** Listener calls, failed ones included. */
  readonly calls = new Map<number, number>();

  call(n: number): void {
    this.calls.set(n, (this.calls.get(n) ?? 0) + 1);
  }

  handle(n: number): void {
    this.handled.set(n, (this.handled.get(n) ?? 0) + 1);
  }

  has(numbers: number[]): boolean {
    return numbers.every((n) => this.handled.has(n));
  }

  /** Lost: expected and never handled; duplicated: handled more than once (over all the apps given). */
  static count(expected: number[], apps: Application[]): { lost: number; duplicated: number } {
    const times = (n: number) => apps.reduce((sum, app) => sum + (app.handled.get(n) ?? 0), 0);
    return {
      lost: expected.filter((n) => times(n) === 0).length,
      duplicated: expected.reduce((sum, n) => sum + Math.max(0, times(n) - 1), 0),
    };
  }
}

describe('acknowledged at-least-once delivery: two hub replicas, Kafka, Redis', () => {
  const run = uniqueName('ack-e2e');
  const topic = `${run}-gw-events`;
  let bus: KafkaBus;
  const hubs = {} as Record<'a' | 'b', ServiceProcess>;
  let front: FailoverFront;
  const clients = new Set<Gatehouse>();

  before(async () => {
    bus = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: run });
    await bus.ensureTopic(topic, 1);
    const env = kafkaHubEnv(run, topic, {
      JWT_SECRET_KEY: jwtSecret,
      ACK_TIMEOUT: '2s',
      LONGPOLL_TIMEOUT: '1s',
    });
    const [a, b] = await Promise.all((await hubSlots(run, env)).map(startHub));
    hubs.a = a!;
    hubs.b = b!;
    front = await FailoverFront.start([hubs.a.publicUrl!, hubs.b.publicUrl!]);
  });
  after(async () => {
    await Promise.all([...clients].map((c) => c.close()));
    await front?.close();
    await Promise.all(Object.values(hubs).map((h) => h.stop()));
    await bus?.close();
  });

  /** Events of `type` numbered `from` … `to − 1`, one after the other on the stream. */
  async function publish(type: string, from: number, to = from + 1): Promise<void> {
    for (const n of range(from, to)) {
      const event = { specversion: '1.0', id: `${type}-${n}`, source: 'ack-e2e', type, data: { n } };
      await bus.publish(topic, { value: JSON.stringify(event) });
    }
  }

  interface ClientOptions {
    url: string;
    user: string;
    session: string;
    type: string;
    transport: TransportName;
  }

  /** A client of the session, connected (its welcome came), with its states recorded. */
  async function connect(
    o: ClientOptions,
    listener: (event: CloudEvent) => unknown,
  ): Promise<{ client: Gatehouse; states: ConnectionState[] }> {
    const client = new Gatehouse(o.url, {
      token: signJwt(withExpiry({ sub: o.user }), { alg: 'HS256', key: jwtSecret }),
      transports: [o.transport],
      subscriptions: [{ eventType: o.type }],
      ack: { session: o.session },
      backoff: { initialMs: 200, maxMs: 1000 },
    });
    clients.add(client);
    const states: ConnectionState[] = [];
    client.on('state', (s) => states.push(s));
    client.on('event', listener);
    client.on('error', () => {}); // listener_failed of case (d): counted there
    await waitFor(() => client.state.state === 'connected', {
      timeoutMs: 20_000,
      what: `${o.session} connected`,
    });
    return { client, states };
  }

  async function close(client: Gatehouse): Promise<void> {
    clients.delete(client);
    await client.close();
  }

  /**
   * Where the session stands: a new client of it, on `o.url`, gets the event published now (number
   * `sentinel`) and nothing before it.
   */
  async function assertSessionStartsAt(o: ClientOptions, sentinel: number): Promise<void> {
    const app = new Application();
    const { client } = await connect(o, (e) => app.handle(numberOf(e)));
    await publish(o.type, sentinel);
    await waitFor(() => app.has([sentinel]), { timeoutMs: 20_000, what: `${o.session}: the sentinel` });
    await close(client);
    assert.deepEqual([...app.handled.keys()], [sentinel], `${o.session}: after the acknowledged position`);
  }

  /** The session's first connection handles one event and closes: the store holds a position from then on. */
  async function warmUp(o: ClientOptions): Promise<void> {
    const app = new Application();
    const { client } = await connect(o, (e) => app.handle(numberOf(e)));
    await publish(o.type, 0);
    await waitFor(() => app.has([0]), { timeoutMs: 20_000, what: `${o.session}: warm-up event` });
    await close(client);
  }

  function report(what: string, expected: number[], apps: Application[]): void {
    const { lost, duplicated } = Application.count(expected, apps);
    console.log(
      `acknowledged delivery, ${what}: ${expected.length} events, lost ${lost}, duplicated ${duplicated}`,
    );
    assert.equal(lost, 0, `${what}: lost`);
    assert.equal(duplicated, 0, `${what}: duplicated`);
  }

  it('a tab closed mid-batch: a new client of the session on the other replica gets exactly the rest', async () => {
    const o = { user: 'tab-user', session: 'inbox', type: `${run}.tab` };
    const n = 20;
    const k = 8;
    const first = new Application();
    let closing: Promise<void> | undefined;
    const { client: tab } = await connect({ ...o, url: hubs.a.publicUrl!, transport: 'websocket' }, (e) => {
      // The tab is going away: what reaches it now is never handled.
      if (first.handled.size >= k) return new Promise(() => {});
      first.handle(numberOf(e));
      if (first.handled.size === k) setTimeout(() => (closing = close(tab)), 0);
      return undefined;
    });
    await publish(o.type, 0, n);
    await waitFor(() => closing !== undefined, { timeoutMs: 20_000, what: `${k} events handled` });
    await closing;

    const second = new Application();
    const other = { ...o, url: hubs.b.publicUrl!, transport: 'longpolling' as const };
    const { client: next } = await connect(other, (e) => second.handle(numberOf(e)));
    await waitFor(() => second.has(range(k, n)), { timeoutMs: 20_000, what: 'the other events' });
    await publish(o.type, n);
    await waitFor(() => second.has([n]), { timeoutMs: 20_000, what: 'the sentinel' });
    await close(next);
    assert.deepEqual([...first.handled.keys()], range(0, k), 'the closed tab handled the first k');
    assert.deepEqual([...second.handled.keys()], range(k, n + 1), 'the next client: exactly the rest');
    report(`tab closed after ${k} of ${n}`, range(0, n + 1), [first, second]);
  });

  it('a late acknowledgement (handler slower than ACK_TIMEOUT): redelivered, handled once', async () => {
    const o = {
      url: hubs.b.publicUrl!,
      user: 'late-user',
      session: 'late',
      type: `${run}.late`,
      transport: 'sse' as const,
    };
    await warmUp(o);
    const app = new Application();
    let states: ConnectionState[] = [];
    const redeliveredAndBack = () => {
      const at = states.findIndex((s) => s.state === 'reconnecting' && s.reason.includes('ack_timeout'));
      return at >= 0 && states.slice(at).some((s) => s.state === 'connected');
    };
    const { client } = await connect(o, async (e) => {
      const n = numberOf(e);
      app.call(n);
      // Slower than ACK_TIMEOUT: done only once the gateway gave up waiting and the client is back.
      if (n === 1) await waitFor(redeliveredAndBack, { timeoutMs: 30_000, what: 'an ack_timeout reconnect' });
      app.handle(n);
    }).then((c) => {
      states = c.states;
      return c;
    });
    const redeliveriesBefore = await redeliveries(hubs.b);
    await publish(o.type, 1, 4);
    await waitFor(() => app.has([1, 2, 3]), { timeoutMs: 40_000, what: 'events 1–3 handled' });
    await publish(o.type, 4);
    await waitFor(() => app.has([4]), { timeoutMs: 20_000, what: 'the sentinel' });
    await close(client);
    assert.ok(redeliveredAndBack(), 'the gateway ended the connection for ack_timeout');
    assert.ok((await redeliveries(hubs.b)) > redeliveriesBefore, 'gw_ack_redeliveries_total went up');
    assert.deepEqual([...app.calls.values()], [1, 1, 1, 1], 'each event reached the listener once');
    report('late acknowledgement', range(1, 5), [app]);
    await assertSessionStartsAt(o, 5);
  });

  /**
   * Events 1–5 of a session, `failing` throws the first time; then the sentinel 6. A session of
   * which the store holds no position yet (`fresh`) must get its failed first event again too.
   */
  async function throwsOnce(o: ClientOptions, failing: number, fresh: boolean): Promise<void> {
    if (!fresh) await warmUp(o);
    const app = new Application();
    let thrown = false;
    const { client } = await connect(o, (e) => {
      const n = numberOf(e);
      app.call(n);
      if (n === failing && !thrown) {
        thrown = true;
        throw new Error('the application failed once');
      }
      app.handle(n);
    });
    await publish(o.type, 1, 6);
    // ACK_TIMEOUT 2 s, the clock started again once (event 1 acknowledged), the 1 s tick: about 6 s.
    await waitFor(() => app.has(range(1, 6)), {
      timeoutMs: 15_000,
      what: `${o.session}: events 1–5 handled`,
    });
    await publish(o.type, 6);
    await waitFor(() => app.has([6]), { timeoutMs: 20_000, what: `${o.session}: the sentinel` });
    await close(client);
    assert.deepEqual(
      [...app.calls],
      range(1, 7).map((n) => [n, n === failing ? 2 : 1]),
      `${o.session}: the failed event reached the listener twice, every other once`,
    );
    report(`a listener threw once at event ${failing} of ${o.session}`, range(1, 7), [app]);
    await assertSessionStartsAt(o, 7);
  }

  it('a listener that throws once: that event is handed again, nothing else twice', async () => {
    const url = hubs.b.publicUrl!;
    await throwsOnce(
      { url, user: 'throw-user', session: 'throws', type: `${run}.throw`, transport: 'sse' },
      2,
      false,
    );
    // The first event a new session is sent: nothing acknowledged yet to start again after.
    await throwsOnce(
      {
        url,
        user: 'throw-user',
        session: 'throws-first',
        type: `${run}.throw-first`,
        transport: 'websocket',
      },
      1,
      true,
    );
  });

  it('long-polling: a listener that throws once gets its event again, nothing else twice', () =>
    throwsOnce(
      {
        url: hubs.b.publicUrl!,
        user: 'throw-user',
        session: 'throws-lp',
        type: `${run}.throw-lp`,
        transport: 'longpolling',
      },
      2,
      false,
    ));

  it('the replica a client receives from is SIGKILLed: it comes back on the other, every event handled once', async () => {
    const o = {
      url: front.url,
      user: 'kill-user',
      session: 'orders-view',
      type: `${run}.kill`,
      transport: 'websocket' as const,
    };
    const app = new Application();
    const { client, states } = await connect(o, async (e) => {
      // Handled a while after it arrived: when the replica dies, the last ~20 events are received
      // and not yet acknowledged, so the other replica sends them again and the client must drop them.
      await sleep(300);
      app.handle(numberOf(e));
    });
    const n = 60;
    let killed = false;
    for (const i of range(0, n)) {
      await publish(o.type, i);
      await sleep(20);
      if (!killed && app.handled.size >= 10) {
        killed = true;
        process.kill(hubs.a.pid, 'SIGKILL');
        await hubs.a.exited;
      }
    }
    await waitFor(() => app.has(range(0, n)), { timeoutMs: 30_000, what: 'every event handled' });
    await publish(o.type, n);
    await waitFor(() => app.has([n]), { timeoutMs: 20_000, what: 'the sentinel' });
    await close(client);
    assert.ok(killed, 'hub a was killed while the client received');
    assert.ok(
      states.some((s) => s.state === 'reconnecting'),
      'the client lost its connection and came back',
    );
    report('replica SIGKILLed', range(0, n + 1), [app]);
    await assertSessionStartsAt({ ...o, url: hubs.b.publicUrl! }, n + 1);
  });
});

/** gw_ack_redeliveries_total of a hub (its /metrics on the API port). */
async function redeliveries(hub: ServiceProcess): Promise<number> {
  const text = await (await fetch(`${hub.apiUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('gw_ack_redeliveries_total'));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}
