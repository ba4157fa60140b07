/**
 * Resume from the broker across a replica replacement, as processes on the real brokers, for a
 * Kafka, a Redis-stream and a NATS fan-out stream. Two hub replicas run; clients on replica A (SSE,
 * WebSocket with positions, socket.io, long-polling) receive events; A is killed (SIGKILL) and
 * more events are published than the replicas' buffers hold; a new process with a new replica id
 * takes A's port, and events keep coming while the clients resume on it from their last positions.
 * Every client must end with every event it subscribed to, in order: the lost and duplicated
 * counts are printed and must be 0, and no client is told to resync. A client on replica B stays
 * connected throughout as a control. Then the broker drops the stream's messages with its own
 * retention mechanics, and a resume from an old position gets gw.resync_required.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { type Bus, KafkaBus, NatsBus, RedisBus } from '@gatehouse/bus/all';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import {
  gatewayEnv,
  dependencyAddress,
  exitAfterFileWhenHung,
  LongPollClient,
  openSse,
  openWs,
  type ServiceProcess,
  type SseConnection,
  sleep,
  uniqueName,
  type WsTestClient,
  waitFor,
} from '@gatehouse/testkit';
import { startHub } from '../src/service-processes.ts';
import { Redis } from 'ioredis';
import { Kafka, logLevel } from 'kafkajs';
import { io, type Socket } from 'socket.io-client';

// kafkajs can leave a reconnect timer behind.
after(() => exitAfterFileWhenHung());

type FanoutKind = 'kafka' | 'redis' | 'nats';
const BUFFER = 50;
const subscriptions = [{ eventType: 'greeting', oneOf: [{ name: 'alice' }] }];
const wanted = encodeURIComponent(JSON.stringify(subscriptions));

interface Fanout {
  bus: Bus;
  /** Makes the broker drop every message of the topic, as its retention would. */
  expireAll(topic: string): Promise<void>;
}

/** `keyPrefix`: the hubs' STORE_KEY_PREFIX, which their Redis fan-out stream's key starts with. */
async function fanoutFor(kind: FanoutKind, keyPrefix: string): Promise<Fanout> {
  if (kind === 'redis') {
    return {
      bus: await RedisBus.connect({ url: dependencyAddress.redisUrl, keyPrefix }),
      async expireAll(topic) {
        const redis = new Redis(dependencyAddress.redisUrl);
        await redis.xtrim(keyPrefix + topic, 'MAXLEN', 0);
        redis.disconnect();
      },
    };
  }
  if (kind === 'nats') {
    return {
      bus: await NatsBus.connect({ servers: dependencyAddress.natsUrl }),
      async expireAll(topic) {
        const nc = await natsConnect({ servers: dependencyAddress.natsUrl });
        await (await jetstreamManager(nc)).streams.purge(topic);
        await nc.close();
      },
    };
  }
  return {
    bus: new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: 'e2e-resume' }),
    async expireAll(topic) {
      const admin = new Kafka({
        brokers: dependencyAddress.kafkaBrokers,
        logLevel: logLevel.NOTHING,
      }).admin();
      await admin.connect();
      await admin.fetchTopicMetadata({ topics: [topic] });
      await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '-1' }] });
      await admin.disconnect();
    },
  };
}

function hubEnv(kind: FanoutKind, run: string): Record<string, string> {
  return {
    ...gatewayEnv({ run, fanout: kind, jwtSecret: 'e2e-resume-secret-long-enough-for-hs256' }),
    EVENT_BUFFER_SIZE: String(BUFFER),
    LONGPOLL_TIMEOUT: '1s',
    EXTRACTORS: JSON.stringify({
      greeting: { name: { stable_field_index: 0, event: { json_pointer: '/data/name' } } },
    }),
  };
}

/** What one client saw: the `n` of every greeting, and how many resyncs. */
interface Seen {
  name: string;
  numbers: number[];
  resyncs: number;
}

const greetings = (events: Array<Record<string, unknown>>) =>
  events.filter((e) => e['type'] === 'greeting').map((e) => (e['data'] as { n: number }).n);

class SseClient {
  readonly seen: Seen;
  private conn: SseConnection | undefined;
  private lastId: string | undefined;
  private done: SseConnection[] = [];

  constructor(name = 'sse', resumeFrom?: string) {
    this.seen = { name, numbers: [], resyncs: 0 };
    this.lastId = resumeFrom;
  }

  async open(hubUrl: string): Promise<void> {
    const headers: Record<string, string> = this.lastId ? { 'last-event-id': this.lastId } : {};
    this.conn = await openSse(`${hubUrl}/_gw/v1/connection/sse?subscriptions=${wanted}`, headers);
    assert.equal(this.conn.status, 200);
  }

  /** The stream ended (its replica died): keep what it got and where it was. */
  dropped(): void {
    this.lastId = this.conn!.frames.findLast((f) => f.id !== undefined)?.id;
    this.done.push(this.conn!);
  }

  update(): Seen {
    const all = [...this.done, ...(this.conn ? [this.conn] : [])].flatMap((c) => c.events());
    this.seen.numbers = greetings(all);
    this.seen.resyncs = all.filter((e) => e['type'] === 'gw.resync_required').length;
    return this.seen;
  }

  close(): void {
    this.conn?.close();
  }
}

class WsClient {
  readonly seen: Seen = { name: 'ws', numbers: [], resyncs: 0 };
  private readonly conns: WsTestClient[] = [];

  /** Opens a connection; after the first, from the last position received (the hub's own events carry theirs as `gwcontrol`). */
  open(hubUrl: string): void {
    const positionOf = (e: Record<string, unknown>) => e['gwposition'] ?? (e['gwcontrol'] || undefined);
    const last = this.events()
      .map(positionOf)
      .findLast((p) => p !== undefined);
    const resume = last === undefined ? '' : `&lastEventId=${encodeURIComponent(String(last))}`;
    this.conns.push(
      openWs(
        `${hubUrl.replace('http', 'ws')}/_gw/v1/connection/ws?positions=true&subscriptions=${wanted}${resume}`,
      ),
    );
  }

  update(): Seen {
    const all = this.events();
    this.seen.numbers = greetings(all);
    this.seen.resyncs = all.filter((e) => e['type'] === 'gw.resync_required').length;
    return this.seen;
  }

  close(): void {
    this.conns.at(-1)?.ws.close();
  }

  private events(): Array<Record<string, unknown>> {
    return this.conns.flatMap((c) => c.events);
  }
}

/** The socket.io client reconnects by itself, to the same address, with its recovery offset. */
class SocketIoClient {
  readonly seen: Seen = { name: 'socket.io', numbers: [], resyncs: 0 };
  readonly socket: Socket;

  constructor(hubUrl: string) {
    this.socket = io(hubUrl, {
      path: '/_gw/v1/socket.io/',
      auth: { subscriptions },
      transports: ['websocket'],
      reconnectionDelay: 200,
      reconnectionDelayMax: 500,
    });
    this.socket.on('greeting', (e: { data: { n: number } }) => void this.seen.numbers.push(e.data.n));
    this.socket.on('gw.resync_required', () => void this.seen.resyncs++);
  }

  update(): Seen {
    return this.seen;
  }

  close(): void {
    this.socket.close();
  }
}

/** Polls one replica after another (any replica answers any poll); stops while told to. */
class LongPollLoop {
  readonly seen: Seen = { name: 'long-poll', numbers: [], resyncs: 0 };
  readonly client: LongPollClient;
  hubUrl: string;
  private running = true;
  private paused = false;
  private loop: Promise<void> = Promise.resolve();

  constructor(hubUrl: string) {
    this.hubUrl = hubUrl;
    this.client = new LongPollClient(hubUrl);
  }

  async open(): Promise<void> {
    assert.equal((await this.client.get(`?subscriptions=${wanted}`)).status, 200);
    this.loop = this.run();
  }

  pause(): void {
    this.paused = true;
  }

  resume(hubUrl: string): void {
    this.hubUrl = hubUrl;
    this.paused = false;
  }

  private async run(): Promise<void> {
    while (this.running) {
      if (this.paused) {
        await sleep(50);
        continue;
      }
      const at = new LongPollClient(this.hubUrl);
      at.cookies = this.client.cookies;
      try {
        const events = await at.poll();
        this.seen.numbers.push(...greetings(events));
        this.seen.resyncs += events.filter((e) => e['type'] === 'gw.resync_required').length;
      } catch {
        await sleep(100); // its replica is gone; the test points it elsewhere
      }
    }
  }

  update(): Seen {
    return this.seen;
  }

  async close(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

function tally(seen: Seen, expected: number[]) {
  const got = new Set(seen.numbers);
  const lost = expected.filter((n) => !got.has(n)).length;
  const duplicated = seen.numbers.length - got.size;
  const ordered = seen.numbers.every((n, i) => i === 0 || n > seen.numbers[i - 1]!);
  return {
    client: seen.name,
    received: seen.numbers.length,
    lost,
    duplicated,
    ordered,
    resyncs: seen.resyncs,
  };
}

async function publishRange(
  bus: Bus,
  topic: string,
  from: number,
  to: number,
  pauseMs = 0,
): Promise<string[]> {
  const positions: string[] = [];
  for (let n = from; n < to; n++) {
    const event = {
      specversion: '1.0',
      id: `resume-${n}`,
      source: 'e2e-resume',
      type: 'greeting',
      data: { name: n % 2 === 0 ? 'alice' : 'bob', n },
    };
    positions.push(await bus.publish(topic, { value: JSON.stringify(event) }));
    if (pauseMs) await sleep(pauseMs);
  }
  return positions;
}

/** `gw_resumes_total` of a replica by source (the process labels its series with service="push-hub"). */
async function resumesOf(hub: ServiceProcess): Promise<{ broker: number; ring: number; resync: number }> {
  const text = await (await fetch(`${hub.apiUrl}/metrics`)).text();
  const count = (source: string) =>
    Number(
      new RegExp(`^gw_resumes_total\\{[^}]*source="${source}"[^}]*\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0,
    );
  return { broker: count('broker'), ring: count('ring'), resync: count('resync') };
}

for (const kind of ['kafka', 'redis', 'nats'] as const) {
  describe(`resume from the broker (${kind} fan-out)`, () => {
    it('serves clients of a replaced replica every missed event, then live ones, none twice, none lost', async () => {
      const run = uniqueName(`resume-${kind}`);
      const env = hubEnv(kind, run);
      const topic = env['FANOUT_TOPIC']!;
      const fanout = await fanoutFor(kind, env['STORE_KEY_PREFIX']!);
      const processes: ServiceProcess[] = [];
      const clients: { close(): void | Promise<void> }[] = [];
      try {
        // Some history before the replicas start, so the stream exists and the rings warm up.
        await publishRange(fanout.bus, topic, -20, 0);
        const hubA = await startHub(`hub-a-${kind}`, { ...env, REPLICA_ID: `${run}-a1` });
        const hubB = await startHub(`hub-b-${kind}`, { ...env, REPLICA_ID: `${run}-b` });
        processes.push(hubA, hubB);

        const sse = new SseClient();
        const ws = new WsClient();
        const control = new SseClient('sse on B (control)');
        await sse.open(hubA.publicUrl!);
        ws.open(hubA.publicUrl!);
        await control.open(hubB.publicUrl!);
        const sio = new SocketIoClient(hubA.publicUrl!);
        const lp = new LongPollLoop(hubA.publicUrl!);
        await lp.open();
        clients.push(sse, ws, control, sio, lp);
        await waitFor(() => sio.socket.connected, { timeoutMs: 10_000, what: 'socket.io to connect' });
        await sleep(300);

        const expected = (to: number) => Array.from({ length: to / 2 }, (_, i) => i * 2);
        const early = await publishRange(fanout.bus, topic, 0, 40);
        const all = [sse, ws, sio, lp, control];
        await waitFor(() => all.every((c) => c.update().numbers.length >= 20), {
          timeoutMs: 20_000,
          what: 'the first 20 events on every client',
        });

        // A dies; more events than a buffer holds are published while it is gone.
        lp.pause();
        process.kill(hubA.pid, 'SIGKILL');
        await hubA.exited;
        sse.dropped();
        const gap = await publishRange(fanout.bus, topic, 40, 40 + 4 * BUFFER);

        // A new process with a new replica id takes A's address; events keep coming meanwhile.
        const { API_PORT: _, ...addressOfA } = hubA.env;
        const hubA2 = await startHub(`hub-a2-${kind}`, { ...addressOfA, REPLICA_ID: `${run}-a2` });
        processes.push(hubA2);
        const end = 40 + 4 * BUFFER + 60;
        // A client that was away for less than a buffer: the new replica has those events only
        // because it filled its buffer from the stream when it started.
        const warm = new SseClient('sse (warm buffer)', gap.at(-11));
        await warm.open(hubA2.publicUrl!);
        clients.push(warm);
        const live = publishRange(fanout.bus, topic, 40 + 4 * BUFFER, end, 10);
        await sse.open(hubA2.publicUrl!);
        ws.open(hubA2.publicUrl!);
        lp.resume(hubA2.publicUrl!);
        await live;

        const warmExpected = expected(end).filter((n) => n > 40 + 4 * BUFFER - 11);
        await waitFor(
          () =>
            all.every((c) => c.update().numbers.length >= end / 2) &&
            warm.update().numbers.length >= warmExpected.length,
          {
            timeoutMs: 30_000,
            what: `all ${end / 2} events on every client (have ${all.map((c) => `${c.seen.name} ${c.update().numbers.length}`).join(', ')})`,
          },
        );
        await sleep(500);
        const tallies = [
          ...all.map((c) => tally(c.update(), expected(end))),
          tally(warm.update(), warmExpected),
        ];
        console.log(`resume from the broker, ${kind} fan-out:`);
        console.table(tallies);
        for (const t of tallies) {
          assert.equal(t.lost, 0, `${t.client}: events lost`);
          assert.equal(t.duplicated, 0, `${t.client}: events duplicated`);
          assert.equal(t.ordered, true, `${t.client}: events in order`);
          assert.equal(t.resyncs, 0, `${t.client}: told to resync`);
        }
        const resumes = await resumesOf(hubA2);
        console.log(`replica a2 resumes: ${JSON.stringify(resumes)}`);
        assert.ok(
          resumes.broker >= 4,
          'the SSE, WebSocket, socket.io and long-poll resumes came from the broker',
        );
        assert.equal(resumes.ring, 1, 'the short absence was served from the warmed buffer');

        // The broker drops the stream's messages: an old position can no longer be served.
        await fanout.expireAll(topic);
        const stale = await openSse(`${hubA2.publicUrl}/_gw/v1/connection/sse?subscriptions=${wanted}`, {
          'last-event-id': early[0]!,
        });
        clients.push({ close: () => stale.close() });
        await waitFor(() => stale.events('gw.resync_required').length === 1, {
          timeoutMs: 20_000,
          what: 'gw.resync_required for a position beyond retention',
        });
      } finally {
        for (const c of clients) await c.close();
        await Promise.all(processes.map((p) => p.stop()));
        await fanout.bus.close();
      }
    });
  });
}
