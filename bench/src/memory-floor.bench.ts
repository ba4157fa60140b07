/**
 * The memory floor of a process (issue 25, part 4): each service started the way the image starts
 * it (built JavaScript: `node --enable-source-maps services/<name>/dist/main.js`) against the same
 * service started from its TypeScript (`node services/<name>/src/main.ts`, Node's type stripping),
 * in the same run, interleaved (TS, JS, then JS, TS in the next round), each pinned to cpu0:
 *   - time to ready: from spawn until `GET /ready` on the internal API first answers 200 (polled
 *     every 10 ms);
 *   - idle RSS: VmRSS (and its anonymous part, RssAnon: what the process itself allocated, without
 *     the mapped Node binary) 3 s after ready, no GC forced: what `top` shows;
 *   - the push hub with N SSE connections (default 10k) both ways, through the push-hub
 *     benchmark's session (its client process, forced-GC readings and heap probe).
 * Settings as docker-compose.yml gives them (Kafka fan-out, Redis control bus and store, NATS), plus
 * a push hub on Redis alone, which loads no Kafka client.
 *
 * With `--compare <checkout>` the pair is another checkout's built JavaScript (before) against this
 * one's (after), both built first, instead of TypeScript against built JavaScript.
 *
 * The loaded reading is taken twice: the embedded runner (every service in one process), and a
 * push-hub replica as deployed (Redis store and fan-out bus; no publish, memory only).
 *
 * `--only fanout` (also part of a full run): one built push-hub replica with N SSE connections on
 * each fan-out bus side by side, Kafka and the memory bus (Redis store and control bus for both),
 * alternating which goes first over `--rounds`: what the Kafka client adds to a replica (issue 35's
 * goal: ≤ the memory bus + 40 MiB), with the heap, `external` and ArrayBuffer parts of each; and
 * B-sse on the replica's V8 settings beside them (goal: the Kafka replica's RSS per connection ≤
 * B-sse's; `--n 14286` is one replica's share of the 100k cluster).
 *
 * Run: `node bench/src/memory-floor.bench.ts [--rounds 3] [--n 10000] [--compare <checkout>]
 * [--only idle|loaded|fanout]` (builds first).
 */
import './harness/help.ts'; // first: --help prints the comment above and exits before anything runs
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { dependencyAddress, gatewayEnv } from '@gatehouse/testkit';
import { buildAll } from '../../tools/build.ts';
import { startPushClients } from './clients/push-client-process.ts';
import { boxLine, median, pinProcess, raiseFdLimit } from './harness/index.ts';
import { gatehouseHub, HUB_NODE_ARGS, type HubTarget, rawHub } from './push-hub/hub-targets.ts';
import { fanoutSession } from './push-hub/sessions.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const mib = 1024 * 1024;
const readyGoalMs = 1000;
const hubIdleGoal = 60 * mib;
const hubLoadedGoal = 200 * mib;
/** Issue 35: the replica on Kafka holds N SSE in at most the memory-bus replica's figure + this. */
const kafkaShareGoal = 40 * mib;

/** ts: this checkout's sources; js: this checkout built; base: the `--compare` checkout built. */
type Mode = 'ts' | 'js' | 'base';
const label: Record<Mode, string> = { ts: 'TS', js: 'JS', base: 'base' };

interface Service {
  name: string;
  /** Folder of the entry point: `services/push-hub` → src/main.ts or dist/main.js. */
  dir: string;
  env: Record<string, string>;
}

interface Reading {
  readyMs: number;
  rss: number;
  anon: number;
}

const composeLike = (run: string): Record<string, string> => ({
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
  KAFKA_BROKERS: dependencyAddress.kafkaBrokers.join(','),
  REDIS_URL: dependencyAddress.redisUrl,
  NATS_SERVERS: dependencyAddress.natsUrl,
  FANOUT_BUS: 'kafka',
  FANOUT_TOPIC: `${run}-gw-events`,
  CONTROL_BUS: 'redis',
  STORE: 'redis',
  STORE_KEY_PREFIX: `${run}:`,
  TOKEN_SECRET: `${run}-token-secret-0123456789`,
  SUBMISSION_CHECK: 'no_check',
  SUBSCRIPTION_CHECK: 'no_check',
});

function services(): Service[] {
  const shared = composeLike(`memory-floor-${process.pid}`);
  return [
    { name: 'push-hub', dir: 'services/push-hub', env: shared },
    { name: 'push-hub (Redis bus)', dir: 'services/push-hub', env: { ...shared, FANOUT_BUS: 'redis' } },
    { name: 'publisher', dir: 'services/publisher', env: shared },
    { name: 'proxy', dir: 'services/proxy', env: shared },
    { name: 'blacklist', dir: 'services/blacklist', env: shared },
    { name: 'rest-engine', dir: 'services/rest-engine', env: { HOST: '127.0.0.1', LOG_LEVEL: 'warn' } },
    { name: 'embedded', dir: 'embedded', env: { HOST: '127.0.0.1', LOG_LEVEL: 'warn' } },
  ];
}

function rssOf(pid: number): { rss: number; anon: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1]) * 1024;
  return { rss: kib('VmRSS'), anon: kib('RssAnon') };
}

async function untilReady(apiPort: number, exited: () => boolean, name: string): Promise<void> {
  const deadline = performance.now() + 60_000;
  while (performance.now() < deadline) {
    if (exited()) throw new Error(`${name} exited before it was ready`);
    const ok = await fetch(`http://127.0.0.1:${apiPort}/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await sleep(10);
  }
  throw new Error(`${name}: not ready within 60 s`);
}

/** One start of one service: spawn, time to ready, idle RSS, stop. */
async function measure(
  service: Service,
  mode: Mode,
  ports: { api: number; inbound: number },
): Promise<Reading> {
  const entry = `${mode === 'base' ? compareRoot : root}${service.dir}/${mode === 'ts' ? 'src/main.ts' : 'dist/main.js'}`;
  const nodeArgs = mode === 'ts' ? [] : ['--enable-source-maps'];
  const hubArgs =
    service.dir.endsWith('push-hub') || service.dir === 'embedded' ? ['--max-semi-space-size=8'] : [];
  const env = {
    ...process.env,
    ...service.env,
    API_PORT: String(ports.api),
    INBOUND_PORT: String(ports.inbound),
    REST_SERVER_PORT: String(ports.inbound + 1),
    REST_SERVER_HOST: '127.0.0.1',
  };
  const started = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, ...hubArgs, entry], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  pinProcess(child.pid!, 0);
  try {
    await untilReady(ports.api, () => child.exitCode !== null, service.name);
    const readyMs = performance.now() - started;
    await sleep(3000);
    return { readyMs, ...rssOf(child.pid!) };
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
  }
}

const fmtMib = (bytes: number) => `${(bytes / mib).toFixed(0)} MiB`;
const verdict = (met: boolean) => (met ? 'met' : 'NOT met');

async function idleTable(rounds: number): Promise<void> {
  const list = services();
  const readings = new Map<string, Reading[]>();
  for (let round = 0; round < rounds; round++) {
    for (const service of list) {
      const order: Mode[] = round % 2 === 0 ? [before, 'js'] : ['js', before];
      for (const mode of order) {
        const r = await measure(service, mode, { api: 23470, inbound: 23460 });
        const key = `${service.name}|${mode}`;
        readings.set(key, [...(readings.get(key) ?? []), r]);
      }
    }
  }
  const b = label[before];
  console.log(
    `\nIdle process, median of ${rounds} starts each (${before === 'ts' ? 'TS = type stripping' : `base = ${compareRoot} built`}, JS = built):`,
  );
  console.log(`| service | ready ${b} | ready JS | RSS ${b} | RSS JS | JS/${b} RSS | anon ${b} | anon JS |`);
  console.log('|---|---|---|---|---|---|---|---|');
  for (const service of list) {
    const pick = (mode: Mode, f: (r: Reading) => number) =>
      median(readings.get(`${service.name}|${mode}`)!.map(f));
    const [rts, rjs] = [pick(before, (r) => r.readyMs), pick('js', (r) => r.readyMs)];
    const [mts, mjs] = [pick(before, (r) => r.rss), pick('js', (r) => r.rss)];
    console.log(
      `| ${service.name} | ${rts.toFixed(0)} ms | ${rjs.toFixed(0)} ms | ${fmtMib(mts)} | ${fmtMib(mjs)} | ${(mjs / mts).toFixed(2)}× | ${fmtMib(pick(before, (r) => r.anon))} | ${fmtMib(pick('js', (r) => r.anon))} |`,
    );
  }
  const js = (name: string, f: (r: Reading) => number) => median(readings.get(`${name}|js`)!.map(f));
  const slowest = Math.max(...list.map((s) => js(s.name, (r) => r.readyMs)));
  console.log(
    `\nevery service ready ≤ ${readyGoalMs} ms after start (built JS, slowest ${slowest.toFixed(0)} ms) → ${verdict(slowest <= readyGoalMs)}`,
  );
  const hubIdle = js('push-hub', (r) => r.rss);
  console.log(
    `push hub replica idle ≤ ${fmtMib(hubIdleGoal)} (built JS: ${fmtMib(hubIdle)}) → ${verdict(hubIdle <= hubIdleGoal)}`,
  );
}

async function loadedHub(n: number): Promise<void> {
  const { soft } = raiseFdLimit(process.pid);
  if (n + 500 > soft)
    throw new Error(`N = ${n} needs an open-files limit of ${n + 500}; this process has ${soft}`);
  const client = startPushClients(1, 1);
  try {
    console.log(
      `\nEmbedded runner holding ${n} SSE connections (the push-hub benchmark's H1 session, hub on cpu0):`,
    );
    await loadedReadings(n, client, 1, (mode) => ({
      source: mode === 'ts',
      ...(mode === 'base' ? { main: `${compareRoot}embedded/dist/main.js` } : {}),
    }));
    // The hub as the chart and compose deploy it: a replica of its own, Redis as store and fan-out
    // bus. It takes no publishes (the publisher does), so this session measures memory only.
    console.log(`\nPush-hub replica (Redis store and fan-out bus) holding ${n} SSE connections:`);
    const env = gatewayEnv({ run: `memory-floor-${process.pid}`, fanout: 'redis', jwtSecret: randomUUID() });
    await loadedReadings(n, client, 0, (mode) => ({
      env,
      main: `${mode === 'base' ? compareRoot : root}services/push-hub/${mode === 'ts' ? 'src/main.ts' : 'dist/main.js'}`,
      source: mode === 'ts',
    }));
  } finally {
    await client.stop();
  }
}

/** The before and the built (`js`) hub with N connections, one after the other, and the goal. */
async function loadedReadings(
  n: number,
  client: ReturnType<typeof startPushClients>,
  publishes: number,
  hubOf: (mode: Mode) => Partial<Parameters<typeof gatehouseHub>[0]>,
): Promise<void> {
  const session = { n, settleMs: 2000, batchSize: 500, batchIntervalMs: 20, publishes, gapMs: 1000 };
  for (const mode of [before, 'js'] as const) {
    const target = gatehouseHub({ transport: 'sse', port: 23480, apiPort: 23490, cpu: 0, ...hubOf(mode) });
    const r = await fanoutSession(target, client, session, () => undefined);
    console.log(
      `  ${label[mode]}: idle ${fmtMib(r.idle.rssNoGc)}, with ${r.connected} connections ${fmtMib(r.loaded.rssNoGc)} (after a forced GC ${fmtMib(r.loaded.rss)}, after a memory-reducing GC ${fmtMib(r.loaded.reducedRss)}), connect ${(r.connectMs / 1000).toFixed(1)} s`,
    );
    if (mode === 'js') {
      console.log(
        `  ${n} SSE ≤ ${fmtMib(hubLoadedGoal)} total (built JS, after a forced GC: ${fmtMib(r.loaded.rss)}) → ${verdict(r.loaded.rss <= hubLoadedGoal)}`,
      );
    }
  }
}

/**
 * The built replica on the Kafka and on the memory fan-out bus, and B-sse (the bare node:http SSE
 * hub, on the replica's V8 settings), the same session each, the order rotating per round. At
 * `--n 14286` this is one replica of the 100k cluster (cluster-scale.bench.ts S2: 7 replicas).
 */
async function replicaByFanout(n: number, rounds: number): Promise<void> {
  const { soft } = raiseFdLimit(process.pid);
  if (n + 500 > soft)
    throw new Error(`N = ${n} needs an open-files limit of ${n + 500}; this process has ${soft}`);
  const client = startPushClients(1, 1);
  const rows = ['kafka', 'memory', 'B-sse'] as const;
  const totals = new Map<string, number[]>();
  const perConnection = new Map<string, number[]>();
  try {
    console.log(`\nPush-hub replica, built, holding ${n} SSE connections, by fan-out bus, and B-sse:`);
    const session = { n, settleMs: 2000, batchSize: 500, batchIntervalMs: 20, publishes: 0, gapMs: 1000 };
    for (let round = 0; round < rounds; round++) {
      for (const bus of rotate(rows, round)) {
        const r = await fanoutSession(replicaOrBaseline(bus, round), client, session, () => undefined);
        const ext = (m: typeof r.idle) =>
          m.external
            ? `, external ${fmtMib(m.external.external)} (ArrayBuffers ${fmtMib(m.external.arrayBuffers)})`
            : '';
        console.log(
          `  ${bus}: idle ${fmtMib(r.idle.rss)} (heap ${fmtMib(r.idle.heap ?? 0)}${ext(r.idle)}); with ${r.connected} connections ${fmtMib(r.loaded.rssNoGc)}, after a forced GC ${fmtMib(r.loaded.rss)} (heap ${fmtMib(r.loaded.heap ?? 0)}${ext(r.loaded)}), after a memory-reducing GC ${fmtMib(r.loaded.reducedRss)}; ${(r.rssPerConnection / 1024).toFixed(1)} KiB per connection`,
        );
        totals.set(bus, [...(totals.get(bus) ?? []), r.loaded.rss]);
        perConnection.set(bus, [...(perConnection.get(bus) ?? []), r.rssPerConnection]);
      }
    }
  } finally {
    await client.stop();
  }
  const [kafka, memory] = (['kafka', 'memory'] as const).map((bus) => median(totals.get(bus)!));
  console.log(
    `  Kafka replica ≤ memory-bus replica + ${fmtMib(kafkaShareGoal)} with ${n} SSE (after a forced GC, medians: ${fmtMib(kafka!)} vs ${fmtMib(memory!)}, +${fmtMib(kafka! - memory!)}) → ${verdict(kafka! <= memory! + kafkaShareGoal)}`,
  );
  const [replica, bare] = (['kafka', 'B-sse'] as const).map((row) => median(perConnection.get(row)!));
  console.log(
    `  Kafka replica per connection ≤ B-sse's with ${n} SSE (after a forced GC, medians: ${(replica! / 1024).toFixed(1)} vs ${(bare! / 1024).toFixed(1)} KiB = ${(replica! / bare!).toFixed(2)}×) → ${verdict(replica! <= bare!)}`,
  );
}

/** The rows in a different order each round: each goes first, second and last in turn. */
function rotate<T>(rows: readonly T[], round: number): T[] {
  const k = round % rows.length;
  return [...rows.slice(k), ...rows.slice(0, k)];
}

function replicaOrBaseline(row: 'kafka' | 'memory' | 'B-sse', round: number): HubTarget {
  if (row === 'B-sse') return rawHub('sse', 23480, 0, HUB_NODE_ARGS);
  const env = {
    ...gatewayEnv({ run: `memory-floor-${process.pid}-${round}`, jwtSecret: randomUUID() }),
    FANOUT_BUS: row,
  };
  return gatehouseHub({
    transport: 'sse',
    port: 23480,
    apiPort: 23490,
    cpu: 0,
    env,
    main: `${root}services/push-hub/dist/main.js`,
  });
}

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    n: { type: 'string', default: '10000' },
    compare: { type: 'string' },
    // `idle`, `loaded` or `fanout`: one of the parts only.
    only: { type: 'string' },
  },
});
const compareRoot = values.compare === undefined ? undefined : `${resolve(values.compare)}/`;
const before: Mode = compareRoot === undefined ? 'ts' : 'base';
console.log(`Memory floor benchmark — ${boxLine()}; load average ${loadavg()[0]!.toFixed(1)}`);
await buildAll();
if (compareRoot !== undefined)
  execFileSync(process.execPath, [`${compareRoot}tools/build.ts`], { stdio: 'inherit' });
if (values.only === undefined || values.only === 'idle') await idleTable(Number(values.rounds));
if (values.only === undefined || values.only === 'loaded') await loadedHub(Number(values.n));
if (values.only === undefined || values.only === 'fanout')
  await replicaByFanout(Number(values.n), Number(values.rounds));
