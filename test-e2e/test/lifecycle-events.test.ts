/**
 * Lifecycle events on a real Kafka, and on NATS JetStream, from two push-hub processes (Kafka
 * fan-out, Redis store and control channel), each producing to one LIFECYCLE_EVENTS_TOPIC. Connections over SSE, WebSocket
 * and long-polling on both replicas; some closed by their client, some ended by an operator through
 * the other replica's internal API, some with their subscriptions changed by the client or an
 * operator; then hub b is stopped with SIGTERM while connections are still open on it. A consumer of
 * the topic must see, for every connection, exactly one `gw.connection.opened` and, for every one
 * that ended, exactly one `gw.connection.closed` with its reason (`shutdown` for those b's drain
 * closed): printed as lost and duplicated, both 0. Then b, started again, is SIGKILLed with connections
 * open: hub a says `gw.replica.gone` of it, once, so none of them is left untold.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignedTokenCodec, signJwt, withExpiry } from '@gatehouse/auth';
import { type Bus, KafkaBus, NatsBus } from '@gatehouse/bus/all';
import {
  dependencyAddress,
  exitAfterFileWhenHung,
  LongPollClient,
  openSse,
  openWs,
  type ServiceProcess,
  sleep,
  uniqueName,
  waitFor,
} from '@gatehouse/testkit';
import { hubSlots, kafkaHubEnv, startHub } from '../src/hub-pair.ts';

after(() => exitAfterFileWhenHung());

const jwtSecret = 'lifecycle-events-secret-long-enough-for-hs256';

interface LifecycleEvent {
  id: string;
  type: string;
  source: string;
  data: {
    connectionId: string;
    transport: string;
    replica: string;
    user: string | null;
    reason?: string;
    cause?: string;
  };
}

/** A connection of the test: how it ends, if it does, is what its closed event must say. */
interface Conn {
  id: string;
  token: string;
  hub: 'a' | 'b';
  transport: 'sse' | 'ws' | 'longpolling';
  close(): Promise<void> | void;
  /** A long-poll client stops polling, without closing its connection. */
  stopPolling?: () => void;
  /** The reason its closed event must give; undefined while it must have none. */
  expect?: string;
}

const welcomeToken = (events: Array<Record<string, unknown>>) =>
  (events.find((e) => e['type'] === 'gw.connection.create')?.['data'] as { connection_token?: string })
    ?.connection_token;

/** The lifecycle bus: Kafka (its topic of 3 partitions made first) or NATS JetStream (its stream made by the subscribe). */
async function lifecycleBus(kind: 'kafka' | 'nats', run: string, topic: string): Promise<Bus> {
  if (kind === 'nats') {
    const nats = await NatsBus.connect({ servers: [dependencyAddress.natsUrl] });
    return nats;
  }
  const kafka = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: `${run}-consumer` });
  await kafka.ensureTopic(topic, 3);
  return kafka;
}

for (const kind of ['kafka', 'nats'] as const) lifecycleSuite(kind);

function lifecycleSuite(kind: 'kafka' | 'nats'): void {
  const run = uniqueName(`lifecycle-${kind}`);
  const fanoutTopic = `${run}-gw-events`;
  const lifecycleTopic = `${run}-lifecycle`;
  const apiToken = `${run}-internal-token`;
  const auth = { authorization: `Bearer ${apiToken}` };
  const codec = new SignedTokenCodec(`${run}-token-secret`, 'connection');
  const idOf = (token: string) => (codec.decode(token) as { id: string }).id;

  describe(`lifecycle events on ${kind === 'kafka' ? 'Kafka' : 'NATS'} from two hub replicas`, () => {
    let fanout: KafkaBus;
    let bus: Bus;
    const hubs: Record<'a' | 'b', ServiceProcess> = {} as never;
    const seen: LifecycleEvent[] = [];
    const conns: Conn[] = [];
    const polling = new Set<LongPollClient>();

    before(async () => {
      fanout = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: run });
      await fanout.ensureTopic(fanoutTopic, 1);
      bus = await lifecycleBus(kind, run, lifecycleTopic);
      await bus.subscribe(lifecycleTopic, (m) => {
        seen.push(JSON.parse(m.value.toString()) as LifecycleEvent);
      });
      const env = kafkaHubEnv(run, fanoutTopic, {
        JWT_SECRET_KEY: jwtSecret,
        INTERNAL_API_TOKEN: apiToken,
        LIFECYCLE_EVENTS_TOPIC: lifecycleTopic,
        LIFECYCLE_EVENTS_BUS: kind,
        NATS_SERVERS: dependencyAddress.natsUrl,
        // Longer than a stop takes: only the stop's own flush can get the drain's closes out in time.
        LIFECYCLE_EVENTS_FLUSH_INTERVAL: '3s',
        LONGPOLL_TIMEOUT: '1s',
        SHUTDOWN_DRAIN_TIMEOUT_MS: '4000',
        DRAIN_SPREAD_PERCENT: '0',
      });
      const [a, b] = await Promise.all((await hubSlots(run, env)).map(startHub));
      hubs.a = a!;
      hubs.b = b!;
    });
    after(async () => {
      polling.clear();
      for (const c of conns) await c.close();
      await Promise.all(Object.values(hubs).map((h) => h.stop()));
      await bus?.close();
      await fanout?.close();
    });

    const jwt = (user: string) => signJwt(withExpiry({ username: user }), { alg: 'HS256', key: jwtSecret });
    const subs = encodeURIComponent(JSON.stringify([{ eventType: 'news' }]));

    async function sse(hub: 'a' | 'b', user: string): Promise<Conn> {
      const client = await openSse(
        `${hubs[hub].publicUrl}/_gw/v1/connection/sse?jwt=${jwt(user)}&subscriptions=${subs}`,
      );
      const token = await waitFor(() => welcomeToken(client.events()), { what: 'SSE welcome' });
      return { id: idOf(token), token, hub, transport: 'sse', close: () => client.close() };
    }
    async function ws(hub: 'a' | 'b', user: string): Promise<Conn> {
      const url = hubs[hub].publicUrl!.replace('http', 'ws');
      const client = openWs(`${url}/_gw/v1/connection/ws?jwt=${jwt(user)}&subscriptions=${subs}`);
      const token = await waitFor(() => welcomeToken(client.events), { what: 'WebSocket welcome' });
      return { id: idOf(token), token, hub, transport: 'ws', close: () => client.ws.terminate() };
    }
    /** Polls in a loop (as a client does) until the test stops it or its connection ends. */
    async function longPoll(hub: 'a' | 'b', user: string): Promise<Conn> {
      const client = new LongPollClient(hubs[hub].publicUrl!);
      const created = await client.get(`?jwt=${jwt(user)}&subscriptions=${subs}`);
      assert.equal(created.status, 200, created.text);
      const token = client.cookies.get('connection_token')!;
      polling.add(client);
      void (async () => {
        while (polling.has(client) && client.cookies.has('connection_token'))
          if (!(await client.get().catch(() => undefined))) await sleep(100);
      })();
      const close = async () => {
        if (!polling.delete(client)) return;
        await fetch(`${hubs[hub].publicUrl}/_gw/v1/connection/longpolling?pollToken=${token}`, {
          method: 'DELETE',
        }).catch(() => {});
      };
      return {
        id: idOf(token),
        token,
        hub,
        transport: 'longpolling',
        close,
        stopPolling: () => void polling.delete(client),
      };
    }

    const ofType = (type: string, id: string) =>
      seen.filter((e) => e.type === type && e.data.connectionId === id);

    it('tells once of every connection opened and closed, with its reason, across a SIGTERM drain', async () => {
      for (const hub of ['a', 'b'] as const)
        for (let i = 0; i < 6; i++) {
          conns.push(await sse(hub, `${hub}-sse-${i}`));
          conns.push(await ws(hub, `${hub}-ws-${i}`));
          if (i < 3) conns.push(await longPoll(hub, `${hub}-lp-${i}`));
        }
      await waitFor(() => conns.every((c) => ofType('gw.connection.opened', c.id).length === 1), {
        what: 'an opened event for every connection',
        timeoutMs: 20_000,
      });
      for (const c of conns)
        assert.equal(ofType('gw.connection.opened', c.id)[0]!.data.replica, `${run}-hub-${c.hub}`);

      const on = (hub: 'a' | 'b', transport: Conn['transport']) =>
        conns.filter((c) => c.hub === hub && c.transport === transport && c.expect === undefined);
      // Closed by their clients: two SSE and two WebSocket on each replica, one long-poll.
      for (const hub of ['a', 'b'] as const)
        for (const c of [
          ...on(hub, 'sse').slice(0, 2),
          ...on(hub, 'ws').slice(0, 2),
          on(hub, 'longpolling')[0]!,
        ]) {
          c.expect = 'client_closed';
          await c.close();
        }
      // Ended by an operator through the other replica: one of each transport on each replica.
      for (const hub of ['a', 'b'] as const) {
        const other = hubs[hub === 'a' ? 'b' : 'a'];
        for (const c of [on(hub, 'sse')[0]!, on(hub, 'ws')[0]!, on(hub, 'longpolling')[0]!]) {
          const res = await fetch(`${other.apiUrl}/v3/connections/${c.id}?reconnect=false`, {
            method: 'DELETE',
            headers: auth,
          });
          assert.equal(res.status, 200, await res.text());
          c.expect = 'disconnected';
        }
      }
      // Subscriptions changed: by the client (a PUT on the other replica), by an operator.
      const changedByClient = on('b', 'sse')[0]!;
      const put = await fetch(
        `${hubs.a.publicUrl}/_gw/v1/connection/sse/${changedByClient.token}/subscriptions`,
        {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ subscriptions: [{ eventType: 'sports' }] }),
        },
      );
      assert.equal(put.status, 204, await put.text());
      const changedByOperator = on('a', 'ws')[0]!;
      const op = await fetch(`${hubs.b.apiUrl}/v3/connections/${changedByOperator.id}/subscriptions`, {
        method: 'PUT',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ subscriptions: [{ eventType: 'weather' }] }),
      });
      assert.equal(op.status, 204, await op.text());

      // Hub b stops with its SSE and WebSocket connections open: its drain closes them. Its long-poll
      // connections live in the store and go on (their clients poll hub a): they do not end.
      for (const c of [...on('b', 'sse'), ...on('b', 'ws')]) c.expect = 'shutdown';
      for (const c of on('b', 'longpolling')) c.stopPolling!();
      const exit = await hubs.b.stop(30_000);
      assert.equal(exit.code, 0, hubs.b.output());

      const ended = conns.filter((c) => c.expect !== undefined);
      // Past the bound, the count below says how many were lost.
      await waitFor(() => ended.every((c) => ofType('gw.connection.closed', c.id).length > 0), {
        what: `a closed event for the ${ended.length} connections that ended`,
        timeoutMs: 20_000,
      }).catch(() => undefined);
      await waitFor(() => ofType('gw.subscriptions.changed', changedByOperator.id).length > 0, {
        timeoutMs: 10_000,
      });
      let lost = 0;
      let duplicated = 0;
      const wrong: string[] = [];
      for (const c of conns) {
        const opened = ofType('gw.connection.opened', c.id).length;
        const closed = ofType('gw.connection.closed', c.id);
        const want = c.expect === undefined ? 0 : 1;
        lost += Math.max(0, 1 - opened) + Math.max(0, want - closed.length);
        duplicated += Math.max(0, opened - 1) + Math.max(0, closed.length - want);
        if (want && closed[0] && closed[0].data.reason !== c.expect)
          wrong.push(`${c.hub}/${c.transport} ${c.id}: ${closed[0].data.reason}, not ${c.expect}`);
      }
      const shutdowns = ended.filter((c) => c.expect === 'shutdown').length;
      console.log(
        `lifecycle: ${conns.length} connections, ${ended.length} ended (${shutdowns} by b's drain), ${seen.length} events; lost ${lost}, duplicated ${duplicated}`,
      );
      assert.deepEqual(wrong, []);
      assert.equal(lost, 0, 'lost');
      assert.equal(duplicated, 0, 'duplicated');
      assert.deepEqual(
        ofType('gw.subscriptions.changed', changedByClient.id).map((e) => e.data.cause),
        ['client'],
      );
      assert.deepEqual(
        ofType('gw.subscriptions.changed', changedByOperator.id).map((e) => e.data.cause),
        ['operator'],
      );
      assert.equal(new Set(seen.map((e) => e.id)).size, seen.length, 'every event has its own id');
    });

    it('says once, from the live replica, that a SIGKILLed replica is gone: none of its connections left untold', async () => {
      hubs.b = await hubs.b.restart();
      const onB: Conn[] = [];
      for (let i = 0; i < 4; i++) onB.push(await sse('b', `b2-sse-${i}`), await ws('b', `b2-ws-${i}`));
      conns.push(...onB);
      await waitFor(() => onB.every((c) => ofType('gw.connection.opened', c.id).length === 1), {
        what: 'the opened events on b',
        timeoutMs: 20_000,
      });
      process.kill(hubs.b.pid, 'SIGKILL');
      await hubs.b.exited;
      const killedAt = Date.now();
      const replica = `${run}-hub-b`;
      const gone = () =>
        seen.filter(
          (e) => e.type === 'gw.replica.gone' && (e.data as { replica?: string }).replica === replica,
        );
      // The registry forgets a replica 15 s after its last beat; a live one reaps it at its next beat (5 s).
      await waitFor(() => gone().length > 0, { what: 'gw.replica.gone of b', timeoutMs: 90_000 });
      console.log(
        `lifecycle: gw.replica.gone ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the SIGKILL`,
      );
      await sleep(6000);
      assert.equal(gone().length, 1, 'told once');
      assert.equal(gone()[0]!.source, `/gw/push-hub/${encodeURIComponent(`${run}-hub-a`)}`);
      // Every connection of the dead replica: closed by it before it died, or covered by the gone event.
      const untold = onB.filter(
        (c) => ofType('gw.connection.closed', c.id).length === 0 && gone().length === 0,
      );
      const closedTwice = onB.filter((c) => ofType('gw.connection.closed', c.id).length > 1);
      console.log(
        `lifecycle: SIGKILL of b with ${onB.length} connections: lost ${untold.length}, duplicated ${closedTwice.length}`,
      );
      assert.deepEqual(untold, []);
      assert.deepEqual(closedTwice, []);
      for (const c of onB) c.close = () => {};
    });
  });
}
