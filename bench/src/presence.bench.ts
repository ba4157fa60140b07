/**
 * What presence costs a hub cluster (issue "Who is here"): the joins and leaves of
 * PRESENCE_EVENT_TYPES, tracked and announced, and the queries, at 10k and 100k connections.
 *
 * Two hub replicas in this process, as push-hub-service.ts wires them: a real Hub (its subscription
 * index and connection facts), a PresenceTracker on each, their presence channels (ReplicaChannel)
 * on a real Redis (a redis-server this bench starts on a free port, so nothing else counts in its
 * command total) as control bus and store. Replica a takes the connections; b answers a's
 * announcements and queries as a peer does. Each connection is a member of its own (a session)
 * in one of 1,000 rooms (`{"room": n}` of chat.message), so every connect is a join and every close
 * a leave: the most work presence can be given.
 *
 * Sides, alternating for `--rounds` samples on fresh hubs: `without` (the hub alone: add and remove)
 * and `with` (the hub telling the tracker, which batches and announces). Per connection: the CPU
 * time of the process (user + system: both replicas' work, ioredis's included) to connect and then
 * to close all of them (each side waits until its announcements are done), the heap it holds once
 * connected (after a full GC), the Redis commands the cluster sent (INFO stats), and those it sends
 * per minute with everyone connected and nothing changing (the channels' heartbeats and blocking
 * reads, and presence's look for gone replicas; 10 s, scaled). Then, with
 * presence: the time of one query for a room (10 or 100 connections) and for the whole type, on
 * replica a (answered for itself and b, over Redis).
 *
 * Run: `node bench/src/presence.bench.ts [--rounds 3] [--sizes 10000,100000]`. About a
 * minute and a half at these sizes.
 */
import './harness/help.ts'; // first: --help prints the comment above and exits before anything runs
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ReplicaChannel } from '@gatehouse/bus';
import { RedisBus } from '@gatehouse/bus/all';
import { answerQuery, EventRing, Hub, HubMetrics, PresenceTracker } from '@gatehouse/push-hub';
import { createLogger, createRegistry } from '@gatehouse/service-kit';
import { RedisStore } from '@gatehouse/store/redis';
import { boxLine, redisCommandsProcessed } from './harness/index.ts';

const flag = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const rounds = Number(flag('--rounds', '3'));
const sizes = flag('--sizes', '10000,100000').split(',').map(Number);
const rooms = 1000;
// A full GC before each heap reading, without asking for --expose-gc (run-all.ts starts benches plainly).
v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const logger = createLogger({ name: 'presence-bench', level: 'warn' });

const extractors = new Map([
  [
    'chat.message',
    [
      {
        name: 'room',
        stableFieldIndex: 0,
        eventPointer: '/data/room',
        jwtPointer: undefined,
        readEvent: (e: unknown) => (e as { data?: { room?: unknown } }).data?.room,
      },
    ],
  ],
]);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

async function startRedis(): Promise<{ url: string; stop: () => void }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      await redisCommandsProcessed(url);
      return { url, stop: () => child.kill() };
    } catch {
      await sleep(100);
    }
  }
  throw new Error('redis-server did not start');
}

interface Replica {
  hub: Hub;
  tracker: PresenceTracker | undefined;
  channel: ReplicaChannel;
  close(): Promise<void>;
}

/** One hub replica; with `presence`, its tracker told of every change, over Redis. */
async function replica(url: string, name: string, presence: boolean): Promise<Replica> {
  const bus = await RedisBus.connect({ url });
  const store = await RedisStore.connect({ url });
  const channel = new ReplicaChannel({ bus, replica: name, logger, store, prefix: 'gw.presence.' });
  let tracker: PresenceTracker | undefined;
  const hub = new Hub({
    extractors,
    ring: new EventRing(1000, 1024 * 1024),
    metrics: new HubMetrics(createRegistry()),
    ...(presence && {
      membership: (c) =>
        tracker!.changed(
          { connectionId: c.connectionId, sessionId: c.sessionId, user: c.user },
          c.before,
          c.after,
        ),
    }),
  });
  tracker = new PresenceTracker({
    replica: name,
    announces: (type) => presence && type === 'chat.message',
    leaveDelayMs: 0,
    maxMembers: 10_000_000,
    gather: (request, ask) => channel.gather(request, 10_000, ask),
    liveReplicas: () => channel.live(),
    claimGone: async () => false,
    tell: () => {},
    overflowed: () => {},
    logger,
  });
  await channel.start((body) => {
    const request = body as
      | Parameters<PresenceTracker['answer']>[0]
      | { op: 'query'; eventType: string; where?: string; limit: number };
    if (request.op === 'query')
      return answerQuery(
        { replica: name, hub, sightings: { all: () => [] } as never },
        request.eventType,
        request.where,
        request.limit,
      );
    return tracker!.answer(request);
  });
  await tracker.start();
  return {
    hub,
    tracker,
    channel,
    async close() {
      tracker?.stop();
      await channel.close();
      await bus.close();
      await store.close();
    },
  };
}

const connection = (i: number) => ({
  id: `c${i}`,
  transport: 'ws' as const,
  sessionId: `s${i}`,
  eventsWritten: 0,
  queuedBytes: () => 0,
  send: () => true,
  whenDrained: (ready: () => void) => setImmediate(ready),
  close: () => {},
});

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Until `tracker` has announced all it was told (members announced reach `want`). */
async function settled(tracker: PresenceTracker | undefined, want: number): Promise<void> {
  if (!tracker) return;
  for (let i = 0; i < 6000 && tracker.size !== want; i++) await sleep(10);
  if (tracker.size !== want) throw new Error(`announced ${tracker.size}, wanted ${want}`);
}

interface Sample {
  connectUs: number;
  closeUs: number;
  heapBytes: number;
  commandsConnect: number;
  commandsClose: number;
  /** Redis commands per minute with everyone connected and nothing changing (10 s, scaled). */
  idlePerMinute: number;
  roomQueryMs?: number;
  typeQueryMs?: number;
}

async function sample(url: string, n: number, presence: boolean, run: number): Promise<Sample> {
  const a = await replica(url, `a${run}`, presence);
  const b = await replica(url, `b${run}`, presence);
  const conns = Array.from({ length: n }, (_, i) => connection(i));
  gc();
  const heap0 = process.memoryUsage().heapUsed;
  let commands = await redisCommandsProcessed(url);
  let cpu = cpuMs();
  for (let i = 0; i < n; i++)
    a.hub.add(conns[i]!, [{ eventType: 'chat.message', oneOf: [{ room: i % rooms }] }], { token: 't' });
  await settled(a.tracker && presence ? a.tracker : undefined, n);
  await settled(b.tracker && presence ? b.tracker : undefined, n);
  const connectUs = ((cpuMs() - cpu) * 1000) / n;
  const commandsConnect = ((await redisCommandsProcessed(url)) - commands - 1) / n;
  gc();
  const heapBytes = (process.memoryUsage().heapUsed - heap0) / n;
  const idle0 = await redisCommandsProcessed(url);
  await sleep(10_000);
  const idlePerMinute = ((await redisCommandsProcessed(url)) - idle0 - 1) * 6;
  let roomQueryMs: number | undefined;
  let typeQueryMs: number | undefined;
  if (presence) {
    const t0 = performance.now();
    await a.channel.gather(
      { op: 'query', eventType: 'chat.message', where: '{"room":7}', limit: 1000 },
      10_000,
    );
    roomQueryMs = performance.now() - t0;
    const t1 = performance.now();
    await a.channel.gather({ op: 'query', eventType: 'chat.message', limit: 1000 }, 10_000);
    typeQueryMs = performance.now() - t1;
  }
  commands = await redisCommandsProcessed(url);
  cpu = cpuMs();
  for (const conn of conns) a.hub.remove(conn);
  await settled(a.tracker && presence ? a.tracker : undefined, 0);
  await settled(b.tracker && presence ? b.tracker : undefined, 0);
  const closeUs = ((cpuMs() - cpu) * 1000) / n;
  const commandsClose = ((await redisCommandsProcessed(url)) - commands - 1) / n;
  await a.close();
  await b.close();
  return {
    connectUs,
    closeUs,
    heapBytes,
    commandsConnect,
    commandsClose,
    idlePerMinute,
    roomQueryMs,
    typeQueryMs,
  };
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
const fmt = (x: number, digits = 1) => x.toFixed(digits);

const redis = await startRedis();
try {
  console.log(boxLine());
  let run = 0;
  for (const n of sizes) {
    const got: Record<'without' | 'with', Sample[]> = { without: [], with: [] };
    for (let r = 0; r < rounds; r++)
      for (const side of ['without', 'with'] as const)
        got[side].push(await sample(redis.url, n, side === 'with', run++));
    const m = (side: 'without' | 'with', k: keyof Sample) => median(got[side].map((s) => s[k] ?? Number.NaN));
    console.log(
      `\n${n.toLocaleString('en')} connections, ${rooms} rooms, one member each (medians of ${rounds})`,
    );
    console.log('                          without    with   added');
    for (const [label, k, digits] of [
      ['CPU per connect (µs)', 'connectUs', 1],
      ['CPU per close (µs)', 'closeUs', 1],
      ['heap per connection (B)', 'heapBytes', 0],
      ['Redis commands / connect', 'commandsConnect', 3],
      ['Redis commands / close', 'commandsClose', 3],
      ['Redis commands / minute', 'idlePerMinute', 0],
    ] as const) {
      const w = m('without', k);
      const p = m('with', k);
      console.log(
        `${label.padEnd(25)} ${fmt(w, digits).padStart(8)} ${fmt(p, digits).padStart(7)} ${fmt(p - w, digits).padStart(7)}`,
      );
    }
    console.log(
      `query, one room (${n / rooms} present): ${fmt(m('with', 'roomQueryMs'))} ms; the whole type (${n}): ${fmt(m('with', 'typeQueryMs'))} ms (over Redis, both replicas answering)`,
    );
  }
} finally {
  redis.stop();
}
