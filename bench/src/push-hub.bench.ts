/**
 * Push hub benchmarks (performance-anchors.md §5.3, §6.1–§6.4; issue 3 "Benchmarks"):
 * - H1: idle memory per connection at N connections, one subscription each: Gatehouse SSE vs B-sse
 *   (raw node:http SSE hub) and Gatehouse WebSocket vs B-ws (raw `ws` hub); goal ≤ 1.3×.
 * - H2: the same with 5 subscriptions + 1 filter per connection (Gatehouse SSE); goal ≤ 1.5× B-sse.
 * - H3: one event to N SSE subscribers, publish-to-deliver p50/p99/max; goal p99 ≤ 1.5× B-sse and
 *   ≤ 500 ms; the peers Pushpin, Nchan (Debian packages) and Centrifugo v6 side by side, and
 *   issue 16's goals (p99 ≤ Nchan's, CPU per delivery ≤ 0.8× B-sse, RSS per connection ≤ B-sse).
 * - H3-kafka/-redis/-nats (`h3b`): the same through publisher → broker → two hub replicas; goal:
 *   the added p99 over the memory bus ≤ 50 ms (Kafka), ≤ 20 ms (Redis, NATS).
 * - H4: the same over WebSocket; goal p99 ≤ 1.5× B-ws.
 * - H6: filter cost per subscriber per event at N subscribers with 10 % matching (server CPU from
 *   /proc, filtered events minus unfiltered events to the same subscribers); goal ≤ 5 µs.
 * - http2 (issue 21): Gatehouse SSE on its TLS listener over HTTP/1.1 (node:https clients) and
 *   HTTP/2 (node:http2, one session per client origin with 1 and with 10 streams) next to the plain
 *   HTTP/1.1 row: memory per connection, latency and CPU per delivery as H1/H3, and their ratios.
 *
 * Method: every hub runs alone (started, measured, stopped before the next) pinned to cpu0; one
 * client process pinned to cpu1 holds the N raw `net` connections from 127.0.0.2–.201, counts the
 * first byte as connected and reads only the publish stamp of each event; this orchestrator runs on
 * cpu1 too. Memory: VmRSS (and heap) after a forced GC for Node hubs, and VmRSS after V8's
 * memory-reducing GC, idle and then with all connections open and settled. Latency: arrival − publish time (performance.timeOrigin + performance.now(),
 * carried in the event), 3 publishes 1.5 s apart. The hubs take turns in each round; medians over
 * rounds and ratios of medians are reported.
 *
 * Run: `node bench/src/push-hub.bench.ts` (N = 10000, 3 rounds, about 4 minutes).
 * Flags: `--n 2000` (smoke run; above 18000 the connections are spread over several client
 * processes, and every hub process needs an open-files limit above N), `--rounds 3`,
 * `--scenarios h1,h3` (any of h1,h2,h3,h3b,h4,h6,http2), `--brokers kafka,kafka-tls,redis,nats` (h3b),
 * `--hubs gatehouse-sse,B-sse` (only these), `--no-pushpin`, `--no-nchan`, `--no-centrifugo`,
 * `--cpu-prof` (writes Gatehouse CPU profiles to a temp dir), `--json <file>` (the summary).
 * The brokers of h3b are those of `tools/deps.sh up` (KAFKA_BROKERS or KAFKA_PORT, REDIS_URL or
 * REDIS_PORT, NATS_URL or NATS_PORT; kafka-tls: `tools/deps.sh up kafka-tls`, KAFKA_TLS_SASL_PORT); the
 * peers are installed by `tools/bench-peers.sh`, a missing one skipped. The embedded runner runs built
 * (embedded/dist/main.js), built first when missing or older than its sources (tools/build.ts).
 */
import './harness/help.ts'; // first: --help prints the comment above and exits before anything runs
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { centrifugoVersion } from './baselines/centrifugo-hub.ts';
import { nchanVersion } from './baselines/nchan-hub.ts';
import { pushpinVersion } from './baselines/pushpin-hub.ts';
import { type PushClient, startPushClients } from './clients/push-client-process.ts';
import { boxLine, formatRatio, median, pinProcess, raiseFdLimit, ratio } from './harness/index.ts';
import { type BrokerKind, brokerHub } from './push-hub/broker-targets.ts';
import { http2Comparison, http2Tables } from './push-hub/http2-comparison.ts';
import type { LatencyRow } from './report/write-report.ts';
import {
  centrifugoHub,
  GATEHOUSE_SSE_PATH,
  type GcKind,
  gatehouseHub,
  type HubTarget,
  nchanHub,
  pushpinHub,
  type RunningHub,
  rawHub,
  subscriptionPath,
} from './push-hub/hub-targets.ts';
import {
  type FanoutResult,
  type FilterResult,
  fanoutSession,
  filterSession,
  GROUP_EXTRACTORS,
  groupSubscriptions,
  type SessionOptions,
} from './push-hub/sessions.ts';

const serverCpu = 0;
const loadCpu = 1;
const kib = 1024;
const mib = 1024 * 1024;
/** Hard stop: every step has its own time-out; this catches anything they miss. */
const runDeadlineMs = 20 * 60_000;

type Scenario = 'h1' | 'h2' | 'h3' | 'h3b' | 'h4' | 'h6' | 'http2';
const allScenarios: Scenario[] = ['h1', 'h2', 'h3', 'h3b', 'h4', 'h6', 'http2'];
const allBrokers: BrokerKind[] = ['kafka', 'kafka-tls', 'redis', 'nats'];

function options() {
  const { values } = parseArgs({
    options: {
      n: { type: 'string', default: '10000' },
      rounds: { type: 'string', default: '3' },
      scenarios: { type: 'string', default: allScenarios.join(',') },
      'no-pushpin': { type: 'boolean', default: false },
      'no-nchan': { type: 'boolean', default: false },
      'no-centrifugo': { type: 'boolean', default: false },
      'cpu-prof': { type: 'boolean', default: false },
      json: { type: 'string' },
      hubs: { type: 'string' },
      brokers: { type: 'string', default: allBrokers.join(',') },
    },
  });
  const n = Number(values.n);
  if (!Number.isInteger(n) || n < 100) throw new Error('--n must be an integer ≥ 100');
  const scenarios = values.scenarios.split(',').map((s) => s.trim().toLowerCase()) as Scenario[];
  for (const s of scenarios) if (!allScenarios.includes(s)) throw new Error(`unknown scenario ${s}`);
  return {
    n,
    rounds: Math.max(1, Number(values.rounds)),
    scenarios: new Set(scenarios),
    pushpin: !values['no-pushpin'],
    nchan: !values['no-nchan'],
    centrifugo: !values['no-centrifugo'],
    cpuProf: values['cpu-prof'],
    json: values.json,
    hubs: values.hubs?.split(',').map((h) => h.trim()),
    brokers: values.brokers
      .split(',')
      .map((b) => b.trim())
      .filter((b): b is BrokerKind => {
        if (!allBrokers.includes(b as BrokerKind)) throw new Error(`unknown broker ${b}`);
        return true;
      }),
  };
}

interface Plan {
  fanout: HubTarget[];
  filter: HubTarget | undefined;
}

function plan(o: ReturnType<typeof options>, profileDir: string | undefined): Plan {
  const has = (s: Scenario) => o.scenarios.has(s);
  const nodeArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : undefined;
  const fanout: HubTarget[] = [];
  const plainSse = has('h1') || has('h2') || has('h3') || has('h3b');
  if (plainSse) fanout.push(rawHub('sse', 18931, serverCpu));
  if (plainSse || has('http2'))
    fanout.push(gatehouseHub({ transport: 'sse', port: 18932, apiPort: 18942, cpu: serverCpu, nodeArgs }));
  if (has('http2')) fanout.push(...tlsTargets(nodeArgs));
  if (has('h3') && o.pushpin) {
    const ports = { http: 18933, publish: 18943, zmqPush: 18953, zmqCommand: 18954, origin: 18955 };
    fanout.push(pushpinHub(ports, serverCpu, o.n + 1000));
  }
  if ((has('h1') || has('h3')) && o.nchan) fanout.push(nchanHub(28037, serverCpu, o.n + 1000));
  if ((has('h1') || has('h3')) && o.centrifugo) fanout.push(centrifugoHub(28038, serverCpu));
  if (has('h3b')) {
    for (const kind of o.brokers) {
      const k = ['kafka', 'redis', 'nats', 'kafka-tls'].indexOf(kind);
      const base = 28040 + 10 * k;
      const ports = {
        hubs: [base, base + 1],
        hubApis: [base + 2, base + 3],
        publisherApi: base + 4,
        publisherInbound: base + 5,
      } as const;
      fanout.push(
        brokerHub(kind, { ...ports, hubs: [...ports.hubs], hubApis: [...ports.hubApis] }, serverCpu),
      );
    }
  }
  if (has('h1') || has('h4')) {
    fanout.push(rawHub('ws', 18934, serverCpu));
    fanout.push(gatehouseHub({ transport: 'ws', port: 18935, apiPort: 18945, cpu: serverCpu, nodeArgs }));
  }
  const filter =
    has('h2') || has('h6')
      ? gatehouseHub({
          name: 'gatehouse-sse-filtered',
          transport: 'sse',
          port: 18936,
          apiPort: 18946,
          cpu: serverCpu,
          extractors: GROUP_EXTRACTORS,
          paths: groupSubscriptions(10).map((subs) => subscriptionPath(GATEHOUSE_SSE_PATH, subs)),
          nodeArgs,
        })
      : undefined;
  const only = o.hubs;
  if (!only) return { fanout, filter };
  return {
    fanout: fanout.filter((t) => only.includes(t.name)),
    filter: filter && only.includes(filter.name) ? filter : undefined,
  };
}

/**
 * Issue 21: Gatehouse SSE on the edge's TLS listener, HTTP/1.1 (node:https) and HTTP/2 (node:http2).
 * HTTP/2 as browsers use it: one session per client origin. One stream per session is the main row
 * (a user with one tab has one EventSource, so the session carries one stream, and every delivery
 * pays its own frame, TLS record and write); ten streams per session are ten tabs of one browser
 * on the hub's origin (HTTP/1.1's limit of six connections per origin is what HTTP/2 lifts).
 */
function tlsTargets(nodeArgs: string[] | undefined): HubTarget[] {
  const common = { transport: 'sse', cpu: serverCpu, nodeArgs } as const;
  return [
    gatehouseHub({
      ...common,
      name: 'gatehouse-sse-tls',
      port: 18971,
      apiPort: 18973,
      tls: { port: 18972, protocol: 'http/1.1' },
    }),
    gatehouseHub({
      ...common,
      name: 'gatehouse-sse-h2',
      port: 18974,
      apiPort: 18976,
      tls: { port: 18975, protocol: 'h2', streamsPerSession: 1 },
    }),
    gatehouseHub({
      ...common,
      name: 'gatehouse-sse-h2x10',
      port: 18977,
      apiPort: 18979,
      tls: { port: 18978, protocol: 'h2', streamsPerSession: 10 },
    }),
  ];
}

/** At most this many connections per client process (it holds one socket each, plus its own fds). */
const connectionsPerClient = 18_000;

/**
 * Raises this process's open-files soft limit to the hard one (hubs and clients started later
 * inherit it) and checks that one hub process may hold N connections: with fewer, the benchmark
 * would only measure refusals. Returns how many client processes share the N connections.
 */
function fdPlan(n: number): number {
  const { soft, hard } = raiseFdLimit(process.pid);
  // A hub holds one fd per connection plus its listeners, broker connections, files (a few hundred at most).
  if (n + 500 > soft) {
    throw new Error(
      `N = ${n} needs an open-files limit of at least ${n + 500} per hub process; this process has ${soft} (hard limit ${hard}), and raising the hard limit needs CAP_SYS_RESOURCE: set LimitNOFILE= (systemd), --ulimit nofile= (podman/docker) or /etc/security/limits.conf and start again`,
    );
  }
  return Math.ceil(n / connectionsPerClient);
}

const fmtKib = (bytes: number | undefined) => (bytes === undefined ? '–' : `${(bytes / kib).toFixed(1)} KiB`);
const fmtMs = (ms: number) => ms.toFixed(ms < 10 ? 1 : 0);

function memoryLine(r: FanoutResult | FilterResult): string {
  const mb = (b: number) => (b / mib).toFixed(0);
  const reduced = r.gc === 'node' ? `, young gen shrunk ${fmtKib(r.reducedRssPerConnection)}` : '';
  const retried = r.retried ? ` (${r.retried} connects retried)` : '';
  return `${r.connected} conns in ${(r.connectMs / 1000).toFixed(1)} s${retried} | RSS ${mb(r.idle.rss)} → ${mb(r.loaded.rss)} MiB = ${fmtKib(r.rssPerConnection)}/conn after ${r.gc === 'none' ? 'no' : r.gc} GC (no GC ${fmtKib(r.rssNoGcPerConnection)}${reduced}), heap ${fmtKib(r.heapPerConnection)}/conn`;
}

function printFanout(r: FanoutResult): void {
  const pubs = r.publishes.map((p) => `${fmtMs(p.p50)}/${fmtMs(p.p99)}/${fmtMs(p.max)}`).join(', ');
  const cpu = r.publishes.map((p) => p.serverCpuUsPerDelivery.toFixed(1)).join('/');
  const clientCpu = r.publishes.map((p) => p.clientCpuMs.toFixed(0)).join('/');
  const closed = Math.max(...r.publishes.map((p) => p.closed));
  console.log(`  ${r.target.padEnd(22)} ${memoryLine(r)}`);
  console.log(
    `  ${''.padEnd(22)} p50/p99/max ms per publish: ${pubs} | server CPU µs/delivery ${cpu} | client CPU ms ${clientCpu}`,
  );
  if (closed > 0)
    console.log(`  ${''.padEnd(22)} ${closed} connection(s) closed by the hub during the publishes`);
}

function printFilter(r: FilterResult): void {
  console.log(`  ${r.target.padEnd(22)} ${memoryLine(r)}`);
  console.log(
    `  ${''.padEnd(22)} server CPU per event: filtered ${r.cpuPerEventUs.filtered.toFixed(0)} µs, control ${r.cpuPerEventUs.control.toFixed(0)} µs, none ${r.cpuPerEventUs.none.toFixed(0)} µs (medians of ${r.eventsPerKind} events each)`,
  );
  console.log(
    `  ${''.padEnd(22)} filter cost ${r.filterCostUs.toFixed(3)} µs/subscriber/event (means: ${r.filterCostMeanUs.toFixed(3)}; /proc/stat totals: ${r.filterCostStatUs.toFixed(3)}); one delivery ${r.deliveryCostUs.toFixed(1)} µs`,
  );
  console.log(
    `  ${''.padEnd(22)} ${r.matching} matching p50/p99/max ${fmtMs(r.filteredLatency.p50)}/${fmtMs(r.filteredLatency.p99)}/${fmtMs(r.filteredLatency.max)} ms`,
  );
}

interface MemorySummary {
  gc: GcKind;
  rss: number;
  rssMin: number;
  rssMax: number;
  rssNoGc: number;
  reducedRss: number;
  heap: number | undefined;
  loadedRss: number;
}

/** Medians of one target's memory results over all rounds. */
function memorySummary(results: Array<FanoutResult | FilterResult>): MemorySummary {
  const rss = results.map((r) => r.rssPerConnection);
  const heaps = results.flatMap((r) => (r.heapPerConnection === undefined ? [] : [r.heapPerConnection]));
  return {
    gc: results[0]!.gc,
    rss: median(rss),
    rssMin: Math.min(...rss),
    rssMax: Math.max(...rss),
    rssNoGc: median(results.map((r) => r.rssNoGcPerConnection)),
    reducedRss: median(results.map((r) => r.reducedRssPerConnection)),
    heap: heaps.length ? median(heaps) : undefined,
    loadedRss: median(results.map((r) => r.loaded.rss)),
  };
}

/** One hub's latency over the publishes of a run (the report's row). */
type LatencySummary = LatencyRow;

/** Medians of one target's publishes over all rounds. */
function latencySummary(results: FanoutResult[]): LatencySummary {
  const pubs = results.flatMap((r) => r.publishes);
  const p99 = pubs.map((p) => p.p99);
  const cpu = pubs.map((p) => p.serverCpuUsPerDelivery);
  return {
    p50: median(pubs.map((p) => p.p50)),
    p99: median(p99),
    p99Min: Math.min(...p99),
    p99Max: Math.max(...p99),
    max: median(pubs.map((p) => p.max)),
    cpuPerDelivery: median(cpu),
    cpuMin: Math.min(...cpu),
    cpuMax: Math.max(...cpu),
    clientCpuPerDelivery: median(pubs.map((p) => (p.clientCpuMs * 1000) / Math.max(1, p.delivered))),
    cdf: pubs[0]!.quantiles.map((_, k) => median(pubs.map((p) => p.quantiles[k]!))),
  };
}

const verdict = (ok: boolean) => (ok ? 'meets' : 'MISSES');
const gcLabel: Record<GcKind, string> = {
  node: 'Node: full GC (--expose-gc)',
  go: 'Go: runtime.GC via /debug/pprof/heap?gc=1',
  none: 'no GC (C/Rust): VmRSS as is',
};

function reportMemory(
  o: ReturnType<typeof options>,
  mem: Map<string, MemorySummary>,
  filter: MemorySummary | undefined,
): void {
  console.log(
    '\nidle memory per connection (VmRSS delta ÷ N): without GC, after a forced GC [min–max], after a memory-reducing GC (Node), heap delta:',
  );
  const rows = [...mem, ...(filter ? [['gatehouse-sse-filtered', filter] as const] : [])];
  for (const [name, x] of rows) {
    console.log(
      `  ${name.padEnd(22)} no GC ${fmtKib(x.rssNoGc)}, forced GC ${fmtKib(x.rss)} [${fmtKib(x.rssMin)}–${fmtKib(x.rssMax)}], young gen shrunk ${x.gc === 'node' ? fmtKib(x.reducedRss) : '–'}, heap ${fmtKib(x.heap)}, total RSS ${(x.loadedRss / mib).toFixed(0)} MiB  (GC: ${gcLabel[x.gc]})`,
    );
  }
  const compare = (label: string, candidate: MemorySummary | undefined, baseline: string, goal: number) => {
    const b = mem.get(baseline);
    if (!candidate || !b) return;
    const r = ratio(candidate.rss, b.rss);
    const noGc = ratio(candidate.rssNoGc, b.rssNoGc);
    const reduced = ratio(candidate.reducedRss, b.reducedRss);
    const heap =
      candidate.heap !== undefined && b.heap !== undefined ? ratio(candidate.heap, b.heap) : Number.NaN;
    console.log(
      `${label} / ${baseline} RSS per connection after GC = ${formatRatio(r)} (goal ≤ ${goal.toFixed(2)}×) → ${verdict(r <= goal)}; no GC ${formatRatio(noGc)}; young gen shrunk ${formatRatio(reduced)} → ${verdict(reduced <= goal)}; heap ${formatRatio(heap)}`,
    );
  };
  console.log('');
  if (o.scenarios.has('h1')) {
    compare('H1 SSE gatehouse', mem.get('gatehouse-sse'), 'B-sse', 1.3);
    const total = mem.get('gatehouse-sse')?.loadedRss;
    if (total !== undefined) {
      console.log(
        `H1 SSE gatehouse total RSS with ${o.n} connections ${(total / mib).toFixed(0)} MiB (goal ≤ 200 MiB at 10k) → ${verdict(total <= 200 * mib)}`,
      );
    }
    compare('H1 WS  gatehouse', mem.get('gatehouse-ws'), 'B-ws', 1.3);
  }
  if (o.scenarios.has('h2')) compare('H2     gatehouse 5 subs + filter', filter, 'B-sse', 1.5);
}

function reportLatency(o: ReturnType<typeof options>, lat: Map<string, LatencySummary>): void {
  console.log(
    '\none event to N subscribers, publish → arrival, ms (median over publishes [min–max of p99]):',
  );
  for (const [name, x] of lat) {
    console.log(
      `  ${name.padEnd(22)} p50 ${fmtMs(x.p50)}  p99 ${fmtMs(x.p99)} [${fmtMs(x.p99Min)}–${fmtMs(x.p99Max)}]  max ${fmtMs(x.max)}  server CPU ${x.cpuPerDelivery.toFixed(1)} µs/delivery [${x.cpuMin.toFixed(1)}–${x.cpuMax.toFixed(1)}]`,
    );
  }
  const compare = (label: string, candidate: string, baseline: string, goal: number | undefined) => {
    const c = lat.get(candidate);
    const b = lat.get(baseline);
    if (!c || !b) return;
    const r = ratio(c.p99, b.p99);
    const cpu = ratio(c.cpuPerDelivery, b.cpuPerDelivery);
    const goalText =
      goal === undefined ? 'side by side, no goal' : `goal ≤ ${goal.toFixed(2)}× → ${verdict(r <= goal)}`;
    console.log(
      `${label} / ${baseline} p99 = ${formatRatio(r)} (${goalText}); server CPU per delivery ${formatRatio(cpu)}`,
    );
  };
  console.log('');
  if (o.scenarios.has('h3')) {
    compare('H3 SSE gatehouse', 'gatehouse-sse', 'B-sse', 1.5);
    const p99 = lat.get('gatehouse-sse')?.p99;
    if (p99 !== undefined)
      console.log(`H3 SSE gatehouse absolute p99 ${fmtMs(p99)} ms (goal ≤ 500 ms) → ${verdict(p99 <= 500)}`);
    for (const peer of ['pushpin', 'nchan', 'centrifugo'])
      compare('H3 SSE gatehouse', 'gatehouse-sse', peer, undefined);
  }
  if (o.scenarios.has('h4')) compare('H4 WS  gatehouse', 'gatehouse-ws', 'B-ws', 1.5);
  if (o.scenarios.has('h3b')) {
    for (const hop of brokerHops(lat)) console.log(hop.line);
    const tls = tlsCost(lat);
    if (tls) console.log(tls);
  }
}

/** Added goal of the broker hop over the memory bus, by broker (issue 16). */
const hopGoalMs: Record<BrokerKind, number> = { kafka: 50, 'kafka-tls': 50, redis: 20, nats: 20 };

/** H3-<broker>: what publisher → broker → 2 hub replicas adds over H3 on the memory bus. */
function brokerHops(lat: Map<string, LatencySummary>) {
  const memory = lat.get('gatehouse-sse');
  return allBrokers.flatMap((kind) => {
    const x = lat.get(`gatehouse-sse-${kind}`);
    if (!x || !memory) return [];
    const added = { p50: x.p50 - memory.p50, p99: x.p99 - memory.p99, max: x.max - memory.max };
    const goal = hopGoalMs[kind];
    const line = `H3-${kind.padEnd(5)} 2 replicas, publish → ${kind} → hubs: p50/p99/max ${fmtMs(x.p50)}/${fmtMs(x.p99)}/${fmtMs(x.max)} ms; added over the memory bus ${fmtMs(added.p50)}/${fmtMs(added.p99)}/${fmtMs(added.max)} ms (goal added p99 ≤ ${goal} ms) → ${verdict(added.p99 <= goal)}`;
    return [{ kind, ...x, added, goalMs: goal, met: added.p99 <= goal, line }];
  });
}

/** Kafka over SASL_SSL (SCRAM-SHA-512) next to plaintext Kafka, the same run (issue 24). */
function tlsCost(lat: Map<string, LatencySummary>): string | undefined {
  const plain = lat.get('gatehouse-sse-kafka');
  const tls = lat.get('gatehouse-sse-kafka-tls');
  if (!plain || !tls) return undefined;
  return `H3-kafka over TLS+SCRAM vs plaintext: p50 ${fmtMs(tls.p50)} vs ${fmtMs(plain.p50)} ms, p99 ${fmtMs(tls.p99)} vs ${fmtMs(plain.p99)} ms (${formatRatio(tls.p99 / plain.p99)}), CPU per delivery ${tls.cpuPerDelivery.toFixed(1)} vs ${plain.cpuPerDelivery.toFixed(1)} µs`;
}

export interface Goal {
  goal: string;
  value: string;
  met: boolean;
}

/** Where Gatehouse stands against issue 16's goals, measured in this run. */
function issue16Goals(n: number, mem: Map<string, MemorySummary>, lat: Map<string, LatencySummary>): Goal[] {
  const goals: Goal[] = [];
  const g = lat.get('gatehouse-sse');
  const nchan = lat.get('nchan');
  const bsse = lat.get('B-sse');
  if (g && nchan) {
    goals.push({
      goal: 'SSE p99 ≤ Nchan p99',
      value: `${fmtMs(g.p99)} vs ${fmtMs(nchan.p99)} ms = ${formatRatio(ratio(g.p99, nchan.p99))}`,
      met: g.p99 <= nchan.p99,
    });
  }
  if (g && bsse) {
    const r = ratio(g.cpuPerDelivery, bsse.cpuPerDelivery);
    goals.push({
      goal: 'server CPU per delivery ≤ 0.8× B-sse',
      value: `${g.cpuPerDelivery.toFixed(1)} vs ${bsse.cpuPerDelivery.toFixed(1)} µs = ${formatRatio(r)}`,
      met: r <= 0.8,
    });
  }
  for (const [candidate, baseline] of [
    ['gatehouse-sse', 'B-sse'],
    ['gatehouse-ws', 'B-ws'],
  ] as const) {
    const c = mem.get(candidate);
    const b = mem.get(baseline);
    if (!c || !b) continue;
    const r = ratio(c.rss, b.rss);
    goals.push({
      goal: `idle RSS/conn (forced GC) ${candidate} ≤ ${baseline}`,
      value: `${fmtKib(c.rss)} vs ${fmtKib(b.rss)} = ${formatRatio(r)} (no GC ${formatRatio(ratio(c.rssNoGc, b.rssNoGc))})`,
      met: r <= 1,
    });
  }
  const total = mem.get('gatehouse-sse')?.loadedRss;
  if (total !== undefined) {
    goals.push({
      goal: `Gatehouse total RSS with ${n} SSE ≤ 200 MiB (goal at 10k)`,
      value: `${(total / mib).toFixed(0)} MiB`,
      met: total <= 200 * mib,
    });
  }
  return goals;
}

function reportFilter(filter: FilterResult[], h3p99: number | undefined) {
  const cost = median(filter.map((f) => f.filterCostUs));
  const stat = median(filter.map((f) => f.filterCostStatUs));
  const means = filter.map((f) => f.filterCostMeanUs.toFixed(3)).join(', ');
  const p99 = median(filter.map((f) => f.filteredLatency.p99));
  const delivery = median(filter.map((f) => f.deliveryCostUs));
  console.log(
    `H6     filter cost ${cost.toFixed(3)} µs per subscriber per event [from means ${means}; /proc/stat totals ${stat.toFixed(3)}] (goal ≤ 5 µs) → ${verdict(cost <= 5)}; one delivery ${delivery.toFixed(1)} µs`,
  );
  const vsH3 = h3p99 === undefined ? '' : ` vs H3 p99 ${fmtMs(h3p99)} ms (goal ≤) → ${verdict(p99 <= h3p99)}`;
  console.log(`H6     p99 to the ${filter[0]!.matching} matching ${fmtMs(p99)} ms${vsH3}`);
  return {
    filterCostUs: cost,
    filterCostStatUs: stat,
    deliveryCostUs: delivery,
    matchingP99Ms: p99,
    matching: filter[0]!.matching,
  };
}

function report(o: ReturnType<typeof options>, fanout: Map<string, FanoutResult[]>, filter: FilterResult[]) {
  console.log(`\nSummary over ${o.rounds} round(s), N = ${o.n} (medians over rounds)`);
  const mem = new Map([...fanout].map(([name, rs]) => [name, memorySummary(rs)]));
  const filterMem = filter.length ? memorySummary(filter) : undefined;
  const lat = new Map([...fanout].map(([name, rs]) => [name, latencySummary(rs)]));
  if (o.scenarios.has('h1') || o.scenarios.has('h2')) reportMemory(o, mem, filterMem);
  if (o.scenarios.has('h3') || o.scenarios.has('h3b') || o.scenarios.has('h4')) reportLatency(o, lat);
  let h6: ReturnType<typeof reportFilter> | undefined;
  if (o.scenarios.has('h6') && filter.length) {
    console.log('');
    h6 = reportFilter(filter, lat.get('gatehouse-sse')?.p99);
  }
  const http2 = o.scenarios.has('http2') ? http2Comparison(mem, lat) : undefined;
  if (http2) {
    console.log(
      `\nissue 21: Gatehouse SSE over HTTP/2 next to HTTP/1.1, N = ${o.n} streams (medians over rounds; memory after a full GC as H1, latency and CPU as H3):\n`,
    );
    console.log(http2Tables(http2));
  }
  const goals = issue16Goals(o.n, mem, lat);
  if (goals.length) {
    console.log('\nissue 16 goals (where Gatehouse stands, same run):');
    for (const x of goals) console.log(`  ${x.goal.padEnd(48)} ${x.value} → ${verdict(x.met)}`);
  }
  return {
    brokerHops: brokerHops(lat).map(({ line: _line, cdf: _cdf, ...rest }) => rest),
    memory: Object.fromEntries([
      ...mem,
      ...(filterMem ? [['gatehouse-sse-filtered', filterMem] as const] : []),
    ]),
    latency: Object.fromEntries(lat),
    filter: h6,
    ...(http2 && { http2 }),
    goals,
  };
}

async function main(): Promise<void> {
  const o = options();
  // The orchestrator shares the load CPU with the client, never the server's.
  pinProcess(process.pid, loadCpu);
  const profileDir = o.cpuProf ? mkdtempSync(join(tmpdir(), 'push-hub-prof-')) : undefined;
  const loadAtStart = loadavg()[0]!.toFixed(1);
  const pushpin = pushpinVersion();
  if (o.pushpin && !pushpin) {
    console.log('Pushpin is not installed (tools/bench-peers.sh): its side-by-side run is skipped.');
    o.pushpin = false;
  }
  const nchan = nchanVersion();
  if (o.nchan && !nchan) {
    console.log('Nchan is not installed (tools/bench-peers.sh): its side-by-side run is skipped.');
    o.nchan = false;
  }
  const centrifugo = centrifugoVersion();
  if (o.centrifugo && !centrifugo) {
    console.log('Centrifugo is not built (tools/bench-peers.sh): its side-by-side run is skipped.');
    o.centrifugo = false;
  }
  const wsVersion = (createRequire(import.meta.url)('ws/package.json') as { version: string }).version;
  const peers = {
    ...(pushpin ? { pushpin } : {}),
    ...(nchan ? { nchan } : {}),
    ...(centrifugo ? { centrifugo } : {}),
  };
  console.log(`Push hub benchmark — ${boxLine({ ws: wsVersion, ...peers })}; load average ${loadAtStart}`);
  console.log(
    `N = ${o.n}, ${o.rounds} round(s), scenarios ${[...o.scenarios].join(',')}; hubs one at a time on cpu${serverCpu}, client and orchestrator on cpu${loadCpu}`,
  );
  const { fanout, filter } = plan(o, profileDir);
  const session: SessionOptions = { n: o.n, settleMs: 2000, batchSize: 500, batchIntervalMs: 20 };
  const fanoutResults = new Map<string, FanoutResult[]>(fanout.map((t) => [t.name, []]));
  const filterResults: FilterResult[] = [];

  let live: RunningHub | undefined;
  const clients = fdPlan(o.n);
  if (clients > 1 && filter) throw new Error('H2/H6 need one client process: run them with N ≤ 18000');
  const client: PushClient = startPushClients(clients, loadCpu);
  const emergency = () => {
    for (const pid of live?.pids() ?? []) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  };
  process.once('SIGINT', () => {
    emergency();
    process.exit(130);
  });
  const deadline = setTimeout(() => {
    console.error(`push-hub bench: still running after ${runDeadlineMs / 60_000} min; stopping`);
    emergency();
    process.exit(1);
  }, runDeadlineMs);
  deadline.unref();
  const started = performance.now();
  try {
    for (let round = 1; round <= o.rounds; round++) {
      console.log(`\nround ${round}`);
      for (const target of fanout) {
        const r = await fanoutSession(
          target,
          client,
          { ...session, publishes: 3, gapMs: 1500 },
          (h) => (live = h),
        );
        live = undefined;
        fanoutResults.get(target.name)!.push(r);
        printFanout(r);
      }
      if (filter) {
        const r = await filterSession(
          filter,
          client,
          { ...session, groups: 10, warmup: 30, events: 150 },
          (h) => (live = h),
        );
        live = undefined;
        filterResults.push(r);
        printFilter(r);
      }
    }
    const summary = report(o, fanoutResults, filterResults);
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `\n(total ${seconds.toFixed(0)} s; load average at start ${loadAtStart}, at end ${loadavg()[0]!.toFixed(1)})`,
    );
    if (o.json) {
      const versions = { ws: wsVersion, pushpin, nchan, centrifugo };
      writeFileSync(
        o.json,
        JSON.stringify(
          {
            bench: 'push-hub',
            box: boxLine(),
            versions,
            n: o.n,
            rounds: o.rounds,
            seconds,
            load: [loadAtStart, loadavg()[0]],
            ...summary,
          },
          null,
          1,
        ),
      );
    }
    if (profileDir) console.log(`Gatehouse CPU profiles: ${profileDir}`);
  } finally {
    emergency();
    await client.stop();
  }
}

await main();
