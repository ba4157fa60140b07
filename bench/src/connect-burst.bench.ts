/**
 * Connect bursts (issue 25 part 2): how long N SSE connects take, and the hub's CPU per connect,
 * Gatehouse side by side with B-sse (raw-sse-hub.ts, the floor) in one run. After a replica dies
 * all its clients connect again at once, so connect cost is what a reconnect storm costs.
 *
 * Rows: B-sse, on Node's default V8 settings and on the hub's (`--max-semi-space-size=8`, as the
 * chart, compose and the image start the hub; the ratio against it is printed too); Gatehouse without a token, with an HS256 JWT and with an RS256 JWT (`jwt` query
 * parameter, as a browser EventSource sends it), each without and with `Last-Event-ID` (the stream
 * head, so the resume is served from the ring and sends nothing more). Every JWT burst uses fresh,
 * distinct tokens (one per connection, each its own session), so every verify misses the cache, as
 * on a replica that takes over another's clients (the tokens are signed once and used again in the
 * next round, by a freshly started hub).
 *
 * Method: the hubs are pinned to cpu0, the client process (push-client.ts, raw sockets from
 * 127.0.0.2–.201, 500 connects every 20 ms with at most 1000 unanswered, the first byte with status
 * 200 counts) and this orchestrator to cpu1. One hub at a time: started, one warm-up burst (JIT),
 * then each of its rows' bursts, every connection closed, 1 s of quiet and then until the hub is idle between bursts, stopped.
 * The hubs take turns in each round, the order rotating; medians over rounds. A burst's time runs
 * from the first connect to the last answer; CPU per connect is the hub's CPU time (schedstat) over
 * the same interval ÷ N, steadier than the time on a shared box. The load average is printed with
 * every figure.
 *
 * Run: `node bench/src/connect-burst.bench.ts [flags]` (about 5 minutes; this checkout's JavaScript is
 * built first when missing or older than its sources, tools/build.ts).
 * Flags: `--n 10000`, `--rounds 3`, `--rows plain,hs256,rs256` (Gatehouse hubs to run; B-sse always),
 * `--base <checkout>` (adds the plain rows of another checkout's Gatehouse, e.g. a worktree of the
 * commit before a change, as `gatehouse@base`: before and after side by side in one run),
 * `--cpu-prof` (Gatehouse writes CPU profiles to a temp dir, printed), `--json <file>` (the summary),
 * `--store redis` (the Gatehouse hubs keep the rate limit's counters in Redis, as deployed, instead of
 * in memory; each row then also reports the Redis commands per connect, counted by the server: a
 * figure the box's load does not move; needs `tools/deps.sh up redis`; REDIS_URL or REDIS_PORT, default
 * redis://127.0.0.1:6379).
 */
import './harness/help.ts'; // first: --help prints the comment above and exits before anything runs
import { generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { signJwt } from '@gatehouse/auth';
import { dependencyAddress, gatewayEnv } from '@gatehouse/testkit';
import { type PushClient, startPushClient } from './clients/push-client-process.ts';
import {
  boxLine,
  formatRatio,
  median,
  pinProcess,
  raiseFdLimit,
  ratio,
  redisCommandsProcessed,
} from './harness/index.ts';
import { benchEvent, stampNow } from './push-hub/bench-event.ts';
import {
  GATEHOUSE_SSE_PATH,
  gatehouseHub,
  HUB_NODE_ARGS,
  type HubTarget,
  type RunningHub,
  rawHub,
  subscriptionPath,
} from './push-hub/hub-targets.ts';

const serverCpu = 0;
/** The row of B-sse started with the hub's V8 settings. */
const B_SSE_HUB_V8 = 'B-sse (hub V8 settings)';
const clientCpu = 1;

type Token = 'none' | 'HS256' | 'RS256';

/** One measured kind of burst on a hub. */
interface Row {
  name: string;
  token: Token;
  lastEventId: boolean;
}

interface HubPlan {
  target: HubTarget;
  rows: Row[];
  /** Signs the token of connection i of a burst (its own claims: session, user). */
  sign?: (i: number, burst: string) => string;
  /**
   * Tokens signed once for every turn (a turn starts a fresh hub, whose cache is empty): burst k of a
   * turn takes tokens[k], so no token is sent twice to one hub process.
   */
  tokens?: string[][];
}

export interface BurstSample {
  ms: number;
  /** Connects the hub reset or refused before answering, made again by the client. */
  retried: number;
  cpuUsPerConnect: number;
  /** Redis commands the burst cost per connect (with `--store redis`). */
  storeCommandsPerConnect?: number;
  /** 1-minute load average when the burst ended. */
  load: number;
}

const load1 = () => loadavg()[0]!;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      n: { type: 'string', default: '10000' },
      rounds: { type: 'string', default: '3' },
      rows: { type: 'string', default: 'plain,hs256,rs256' },
      'cpu-prof': { type: 'boolean', default: false },
      json: { type: 'string' },
      base: { type: 'string' },
      store: { type: 'string', default: 'memory' },
    },
  });
  const n = Number(values.n);
  const rounds = Number(values.rounds);
  const wanted = new Set(values.rows.split(','));
  const { soft } = raiseFdLimit(process.pid);
  if (n + 500 > soft)
    throw new Error(`N = ${n} needs an open-files limit of ${n + 500}; this process has ${soft}`);
  pinProcess(process.pid, clientCpu);
  const profileDir = values['cpu-prof'] ? mkdtempSync(join(tmpdir(), 'connect-prof-')) : undefined;
  const nodeArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : undefined;

  const store = storeChoice(values.store);
  const plans = hubPlans(wanted, nodeArgs, values.base, store);
  const client = startPushClient(clientCpu);
  const samples = new Map<string, BurstSample[]>();
  const loadAtStart = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  console.log(boxLine({ N: String(n), rounds: String(rounds) }));
  console.log(`load average at start ${loadAtStart}`);
  try {
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < plans.length; k++) {
        const plan = plans[(k + r) % plans.length]!;
        for (const [row, s] of await hubTurn(
          plan,
          client,
          n,
          plan.target.name !== 'B-sse' ? store.commands : undefined,
        )) {
          console.log(
            `round ${r + 1} ${row.padEnd(28)} ${(s.ms / 1000).toFixed(2)} s, ${s.cpuUsPerConnect.toFixed(0)} µs CPU/connect${commandsText(s.storeCommandsPerConnect)}${s.retried ? `, ${s.retried} retried` : ''} (load ${s.load.toFixed(2)})`,
          );
          samples.set(row, [...(samples.get(row) ?? []), s]);
        }
      }
    }
  } finally {
    await client.stop();
  }
  const summary = summarize(samples);
  console.log(`\nmedians over ${rounds} rounds, N = ${n} (ratio = Gatehouse ÷ B-sse, same run):`);
  for (const s of summary) {
    console.log(
      `  ${s.row.padEnd(28)} ${(s.ms / 1000).toFixed(2)} s = ${Math.round((n / s.ms) * 1000)} connects/s (${formatRatio(s.msRatio)}), ${s.cpuUsPerConnect.toFixed(0)} µs CPU/connect (${formatRatio(s.cpuRatio)})${commandsText(s.storeCommandsPerConnect)}, load ${s.loads}`,
    );
  }
  const equal = summary.find((s) => s.row === B_SSE_HUB_V8);
  if (equal) {
    console.log(`CPU per connect ÷ ${B_SSE_HUB_V8} (the same V8 settings):`);
    for (const s of summary.filter((row) => row.row.startsWith('gatehouse')))
      console.log(`  ${s.row.padEnd(28)} ${formatRatio(ratio(s.cpuUsPerConnect, equal.cpuUsPerConnect))}`);
  }
  const plain = summary.find((s) => s.row === 'gatehouse');
  if (plain) {
    const met = plain.msRatio <= 1;
    console.log(
      `goal: Gatehouse without a token ≤ B-sse's time for ${n} connects → ${met ? 'met' : 'not met'} (${formatRatio(plain.msRatio)})`,
    );
  }
  console.log(
    `load average at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  if (profileDir) console.log(`CPU profiles: ${profileDir}`);
  if (values.json)
    writeFileSync(values.json, JSON.stringify({ n, rounds, loadAtStart, rows: summary }, null, 2));
}

/**
 * Where the Gatehouse hubs keep their shared state. In memory: the all-in-one embedded runner. In
 * Redis: the push-hub service as deployed (its built JavaScript), with Redis as store and fan-out
 * bus, and the server's command count. The push hub takes no publishes, so the Last-Event-ID rows
 * (which publish the head they resume from) are left out then.
 */
interface StoreChoice {
  env: Record<string, string>;
  main: (checkout: string) => string;
  commands?: () => Promise<number>;
  resumeRows: boolean;
}

function storeChoice(kind: string): StoreChoice {
  if (kind === 'memory')
    return { env: {}, main: (checkout) => join(checkout, 'embedded/dist/main.js'), resumeRows: true };
  if (kind !== 'redis') throw new Error('--store is memory or redis');
  const url = dependencyAddress.redisUrl;
  return {
    env: gatewayEnv({ run: `connect-burst-${process.pid}`, fanout: 'redis', jwtSecret: randomUUID() }),
    main: (checkout) => join(checkout, 'services/push-hub/dist/main.js'),
    commands: () => redisCommandsProcessed(url),
    resumeRows: false,
  };
}

const commandsText = (perConnect: number | undefined) =>
  perConnect === undefined ? '' : `, ${perConnect.toFixed(3)} Redis commands/connect`;

function hubPlans(
  wanted: Set<string>,
  nodeArgs: string[] | undefined,
  base: string | undefined,
  store: StoreChoice,
): HubPlan[] {
  const rowsOf = (name: string, token: Token): Row[] => [
    { name, token, lastEventId: false },
    ...(store.resumeRows ? [{ name: `${name} + Last-Event-ID`, token, lastEventId: true }] : []),
  ];
  const here = fileURLToPath(new URL('../../', import.meta.url));
  const main = store.main(here);
  const storeEnv = store.env;
  const plans: HubPlan[] = [
    { target: rawHub('sse', 18990, serverCpu), rows: [{ name: 'B-sse', token: 'none', lastEventId: false }] },
    // B-sse again on the young generation Gatehouse's hub is started with (HUB_NODE_ARGS): its
    // smaller semi-spaces scavenge more often, which a connect pays for in GC.
    {
      target: rawHub('sse', 18989, serverCpu, HUB_NODE_ARGS),
      rows: [{ name: B_SSE_HUB_V8, token: 'none', lastEventId: false }],
    },
  ];
  if (wanted.has('plain')) {
    plans.push({
      target: gatehouseHub({
        transport: 'sse',
        port: 18991,
        apiPort: 18992,
        cpu: serverCpu,
        nodeArgs,
        main,
        env: storeEnv,
      }),
      rows: rowsOf('gatehouse', 'none'),
    });
  }
  if (base) {
    plans.push({
      target: gatehouseHub({
        name: 'gatehouse@base',
        // Built first (`make build` in that checkout), like this one.
        main: store.main(base),
        transport: 'sse',
        port: 18997,
        apiPort: 18998,
        cpu: serverCpu,
        nodeArgs,
        env: storeEnv,
      }),
      rows: rowsOf('gatehouse@base', 'none'),
    });
  }
  if (wanted.has('hs256')) {
    const secret = randomUUID();
    plans.push({
      target: gatehouseHub({
        name: 'gatehouse-hs256',
        transport: 'sse',
        port: 18993,
        apiPort: 18994,
        cpu: serverCpu,
        nodeArgs,
        main,
        env: { ...storeEnv, JWT_SECRET_KEY: secret, JWT_ALG: 'HS256' },
      }),
      rows: rowsOf('gatehouse HS256', 'HS256'),
      sign: (i, burst) => signJwt(claims(i, burst), { alg: 'HS256', key: secret }),
    });
  }
  if (wanted.has('rs256')) {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const key: KeyObject = rsa.privateKey;
    plans.push({
      target: gatehouseHub({
        name: 'gatehouse-rs256',
        transport: 'sse',
        port: 18995,
        apiPort: 18996,
        cpu: serverCpu,
        nodeArgs,
        main,
        env: { ...storeEnv, JWT_SECRET_KEY: pem, JWT_ALG: 'RS256' },
      }),
      rows: rowsOf('gatehouse RS256', 'RS256'),
      sign: (i, burst) => signJwt(claims(i, burst), { alg: 'RS256', key }),
    });
  }
  return plans;
}

/** Distinct claims per connection and burst: its own session, an hour to live. */
function claims(i: number, burst: string): Record<string, unknown> {
  return {
    sub: `user-${i}`,
    username: `user${i}`,
    jti: `${burst}-${i}`,
    exp: Math.floor(Date.now() / 1000) + 3600,
  };
}

/** One hub's turn: start, warm-up burst, each row's burst, stop. */
async function hubTurn(
  plan: HubPlan,
  client: PushClient,
  n: number,
  storeCommands: (() => Promise<number>) | undefined,
): Promise<Array<[string, BurstSample]>> {
  const hub = await startHub(plan.target);
  const out: Array<[string, BurstSample]> = [];
  try {
    await sleep(500);
    const lastEventId = plan.rows.some((r) => r.lastEventId) ? await streamHead(hub) : undefined;
    await burst(hub, client, n, pathsFor(hub, plan, plan.rows[0]!, n, 0), undefined, storeCommands);
    for (const [k, row] of plan.rows.entries()) {
      const paths = pathsFor(hub, plan, row, n, k + 1);
      const headers = row.lastEventId ? `Last-Event-ID: ${lastEventId}\r\n` : undefined;
      out.push([row.name, await burst(hub, client, n, paths, headers, storeCommands)]);
    }
  } finally {
    await hub.stop();
  }
  return out;
}

/** The connect paths of burst k of a turn: the hub's, or with a token of that burst each. */
/** Starts the hub, once more if it did not listen in time (a busy shared box can delay a start). */
async function startHub(target: HubTarget): Promise<RunningHub> {
  try {
    return await target.start();
  } catch (err) {
    console.log(`${target.name} did not start (${(err as Error).message}); trying once more`);
    return target.start();
  }
}

function pathsFor(hub: RunningHub, plan: HubPlan, row: Row, n: number, k: number): string[] {
  if (row.token === 'none' || !plan.sign) return hub.paths;
  plan.tokens ??= [];
  plan.tokens[k] ??= Array.from({ length: n }, (_, i) => plan.sign!(i, `b${k}`));
  const base = subscriptionPath(GATEHOUSE_SSE_PATH, [{ eventType: 'bench' }]);
  return plan.tokens[k].map((token) => `${base}&jwt=${token}`);
}

/** N connects from the client; all connections closed afterwards, 1 s of quiet, then until the hub is idle. */
async function burst(
  hub: RunningHub,
  client: PushClient,
  n: number,
  paths: string[],
  extraHeaders: string | undefined,
  storeCommands: (() => Promise<number>) | undefined,
): Promise<BurstSample> {
  const commandsBefore = await storeCommands?.();
  const cpuBefore = hub.cpuSeconds();
  const c = await client.connect({
    transport: 'sse',
    port: hub.port,
    paths,
    ...(extraHeaders && { extraHeaders }),
    count: n,
    batchSize: 500,
    batchIntervalMs: 20,
    maxPending: 1000,
    timeoutMs: 120_000,
  });
  const cpu = hub.cpuSeconds() - cpuBefore;
  const load = load1();
  if (c.connected < n) throw new Error(`${c.connected}/${n} connected, ${c.failed} failed (${c.firstError})`);
  await client.closeAll();
  await sleep(1000);
  await untilQuiet(hub);
  // Counted through the closes and the quiet second: what a connect costs the store, coming and going.
  const commands = commandsBefore === undefined ? undefined : (await storeCommands!()) - commandsBefore;
  return {
    ms: c.ms,
    retried: c.retried,
    cpuUsPerConnect: (cpu / n) * 1e6,
    ...(commands !== undefined && { storeCommandsPerConnect: commands / n }),
    load,
  };
}

/**
 * Waits until the hub has gone a tenth of a second using at most 5 ms of CPU (at most 10 s): the
 * closes of the burst before must not be counted in the next one. A Gatehouse hub closing 10k
 * connections can take longer than the second of quiet on a busy box, and its closes then fell into
 * the next burst's CPU, never into B-sse's (whose closes are cheap).
 */
async function untilQuiet(hub: RunningHub): Promise<void> {
  const deadline = Date.now() + 10_000;
  let before = hub.cpuSeconds();
  while (Date.now() < deadline) {
    await sleep(100);
    const now = hub.cpuSeconds();
    if (now - before <= 0.005) return;
    before = now;
  }
}

/**
 * The stream's newest position: one event published, then the `id:` of the first frame a new SSE
 * connection gets (its welcome carries the head).
 */
async function streamHead(hub: RunningHub): Promise<string> {
  await hub.publish(benchEvent('bench', 'all', stampNow()));
  const ac = new AbortController();
  const res = await fetch(`http://127.0.0.1:${hub.port}${hub.paths[0]}`, { signal: ac.signal });
  const reader = res.body!.getReader();
  let text = '';
  try {
    while (!/^id: (.*)$/m.test(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
    }
  } finally {
    ac.abort();
  }
  const id = /^id: (.*)$/m.exec(text)?.[1];
  if (!id) throw new Error(`no id in the first frames: ${text.slice(0, 200)}`);
  return id;
}

interface SummaryRow {
  row: string;
  ms: number;
  cpuUsPerConnect: number;
  msRatio: number;
  cpuRatio: number;
  storeCommandsPerConnect?: number;
  /** The 1-minute load averages at the end of each round's burst. */
  loads: string;
}

function summarize(samples: Map<string, BurstSample[]>): SummaryRow[] {
  const base = samples.get('B-sse') ?? [];
  const baseMs = median(base.map((s) => s.ms));
  const baseCpu = median(base.map((s) => s.cpuUsPerConnect));
  return [...samples].map(([row, list]) => {
    const ms = median(list.map((s) => s.ms));
    const cpuUsPerConnect = median(list.map((s) => s.cpuUsPerConnect));
    const commands = list.flatMap((s) =>
      s.storeCommandsPerConnect === undefined ? [] : [s.storeCommandsPerConnect],
    );
    return {
      row,
      ms,
      cpuUsPerConnect,
      msRatio: ratio(ms, baseMs),
      cpuRatio: ratio(cpuUsPerConnect, baseCpu),
      ...(commands.length > 0 && { storeCommandsPerConnect: median(commands) }),
      loads: list.map((s) => s.load.toFixed(2)).join('/'),
    };
  });
}

await main();
