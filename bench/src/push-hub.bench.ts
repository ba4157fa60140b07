/**
 * Push hub benchmarks (performance-anchors.md §5.3, §6.1–§6.4; issue 3 "Benchmarks"):
 * - H1: idle memory per connection at N connections, one subscription each: Gatehouse SSE vs B-sse
 *   (raw node:http SSE hub) and Gatehouse WebSocket vs B-ws (raw `ws` hub); goal ≤ 1.3×.
 * - H2: the same with 5 subscriptions + 1 filter per connection (Gatehouse SSE); goal ≤ 1.5× B-sse.
 * - H3: one event to N SSE subscribers, publish-to-deliver p50/p99/max; goal p99 ≤ 1.5× B-sse and
 *   ≤ 500 ms; Pushpin (Debian package) side by side.
 * - H4: the same over WebSocket; goal p99 ≤ 1.5× B-ws.
 * - H6: filter cost per subscriber per event at N subscribers with 10 % matching (server CPU from
 *   /proc, filtered events minus unfiltered events to the same subscribers); goal ≤ 5 µs.
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
 * Flags: `--n 2000` (smoke run), `--rounds 3`, `--scenarios h1,h3` (any of h1,h2,h3,h4,h6),
 * `--no-pushpin`, `--cpu-prof` (writes Gatehouse CPU profiles to a temp dir).
 */
import { mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pushpinVersion } from './baselines/pushpin-hub.ts';
import { type PushClient, startPushClient } from './clients/push-client-process.ts';
import { boxLine, formatRatio, median, pinProcess, ratio } from './harness/index.ts';
import {
  GATEHOUSE_SSE_PATH,
  gatehouseHub,
  type HubTarget,
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

type Scenario = 'h1' | 'h2' | 'h3' | 'h4' | 'h6';
const allScenarios: Scenario[] = ['h1', 'h2', 'h3', 'h4', 'h6'];

function options() {
  const { values } = parseArgs({
    options: {
      n: { type: 'string', default: '10000' },
      rounds: { type: 'string', default: '3' },
      scenarios: { type: 'string', default: allScenarios.join(',') },
      'no-pushpin': { type: 'boolean', default: false },
      'cpu-prof': { type: 'boolean', default: false },
    },
  });
  const n = Number(values.n);
  // One process holds all client sockets and the fd limit is 20000 (performance-anchors §6.1 rule 7).
  if (!Number.isInteger(n) || n < 100 || n > 18_000) throw new Error('--n must be an integer in 100..18000');
  const scenarios = values.scenarios.split(',').map((s) => s.trim().toLowerCase()) as Scenario[];
  for (const s of scenarios) if (!allScenarios.includes(s)) throw new Error(`unknown scenario ${s}`);
  return {
    n,
    rounds: Math.max(1, Number(values.rounds)),
    scenarios: new Set(scenarios),
    pushpin: !values['no-pushpin'],
    cpuProf: values['cpu-prof'],
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
  if (has('h1') || has('h2') || has('h3')) {
    fanout.push(rawHub('sse', 18931, serverCpu));
    fanout.push(gatehouseHub({ transport: 'sse', port: 18932, apiPort: 18942, cpu: serverCpu, nodeArgs }));
  }
  if (has('h3') && o.pushpin) {
    const ports = { http: 18933, publish: 18943, zmqPush: 18953, zmqCommand: 18954, origin: 18955 };
    fanout.push(pushpinHub(ports, serverCpu, o.n + 1000));
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
  return { fanout, filter };
}

const fmtKib = (bytes: number | undefined) => (bytes === undefined ? '–' : `${(bytes / kib).toFixed(1)} KiB`);
const fmtMs = (ms: number) => ms.toFixed(ms < 10 ? 1 : 0);

function memoryLine(r: FanoutResult | FilterResult): string {
  const mb = (b: number) => (b / mib).toFixed(0);
  return `${r.connected} conns in ${(r.connectMs / 1000).toFixed(1)} s | RSS ${mb(r.idle.rss)} → ${mb(r.loaded.rss)} MiB = ${fmtKib(r.rssPerConnection)}/conn (young gen shrunk: ${fmtKib(r.reducedRssPerConnection)}), heap ${fmtKib(r.heapPerConnection)}/conn`;
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
  rss: number;
  rssMin: number;
  rssMax: number;
  reducedRss: number;
  heap: number | undefined;
  loadedRss: number;
}

/** Medians of one target's memory results over all rounds. */
function memorySummary(results: Array<FanoutResult | FilterResult>): MemorySummary {
  const rss = results.map((r) => r.rssPerConnection);
  const heaps = results.flatMap((r) => (r.heapPerConnection === undefined ? [] : [r.heapPerConnection]));
  return {
    rss: median(rss),
    rssMin: Math.min(...rss),
    rssMax: Math.max(...rss),
    reducedRss: median(results.map((r) => r.reducedRssPerConnection)),
    heap: heaps.length ? median(heaps) : undefined,
    loadedRss: median(results.map((r) => r.loaded.rss)),
  };
}

/** Medians of one target's publishes over all rounds. */
function latencySummary(results: FanoutResult[]) {
  const pubs = results.flatMap((r) => r.publishes);
  const p99 = pubs.map((p) => p.p99);
  return {
    p50: median(pubs.map((p) => p.p50)),
    p99: median(p99),
    p99Min: Math.min(...p99),
    p99Max: Math.max(...p99),
    max: median(pubs.map((p) => p.max)),
    cpuPerDelivery: median(pubs.map((p) => p.serverCpuUsPerDelivery)),
  };
}

const verdict = (ok: boolean) => (ok ? 'meets' : 'MISSES');

function reportMemory(
  o: ReturnType<typeof options>,
  mem: Map<string, MemorySummary>,
  filter: MemorySummary | undefined,
): void {
  console.log(
    '\nidle memory per connection: RSS delta after a full GC [min–max], after a memory-reducing GC, heap delta:',
  );
  const rows = [...mem, ...(filter ? [['gatehouse-sse-filtered', filter] as const] : [])];
  for (const [name, x] of rows) {
    console.log(
      `  ${name.padEnd(22)} RSS ${fmtKib(x.rss)} [${fmtKib(x.rssMin)}–${fmtKib(x.rssMax)}], young gen shrunk ${fmtKib(x.reducedRss)}, heap ${fmtKib(x.heap)}, total RSS ${(x.loadedRss / mib).toFixed(0)} MiB`,
    );
  }
  const compare = (label: string, candidate: MemorySummary | undefined, baseline: string, goal: number) => {
    const b = mem.get(baseline);
    if (!candidate || !b) return;
    const r = ratio(candidate.rss, b.rss);
    const reduced = ratio(candidate.reducedRss, b.reducedRss);
    const heap =
      candidate.heap !== undefined && b.heap !== undefined ? ratio(candidate.heap, b.heap) : Number.NaN;
    console.log(
      `${label} / ${baseline} RSS per connection = ${formatRatio(r)} (goal ≤ ${goal.toFixed(2)}×) → ${verdict(r <= goal)}; young gen shrunk ${formatRatio(reduced)} → ${verdict(reduced <= goal)}; heap ${formatRatio(heap)}`,
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

function reportLatency(o: ReturnType<typeof options>, fanout: Map<string, FanoutResult[]>): void {
  const lat = new Map([...fanout].map(([name, rs]) => [name, latencySummary(rs)]));
  console.log(
    '\none event to N subscribers, publish → arrival, ms (median over publishes [min–max of p99]):',
  );
  for (const [name, x] of lat) {
    console.log(
      `  ${name.padEnd(22)} p50 ${fmtMs(x.p50)}  p99 ${fmtMs(x.p99)} [${fmtMs(x.p99Min)}–${fmtMs(x.p99Max)}]  max ${fmtMs(x.max)}  server CPU ${x.cpuPerDelivery.toFixed(1)} µs/delivery`,
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
    compare('H3 SSE gatehouse', 'gatehouse-sse', 'pushpin', undefined);
  }
  if (o.scenarios.has('h4')) compare('H4 WS  gatehouse', 'gatehouse-ws', 'B-ws', 1.5);
}

function reportFilter(filter: FilterResult[], h3p99: number | undefined): void {
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
}

function report(
  o: ReturnType<typeof options>,
  fanout: Map<string, FanoutResult[]>,
  filter: FilterResult[],
): void {
  console.log(`\nSummary over ${o.rounds} round(s), N = ${o.n} (medians over rounds)`);
  if (o.scenarios.has('h1') || o.scenarios.has('h2')) {
    const mem = new Map([...fanout].map(([name, rs]) => [name, memorySummary(rs)]));
    reportMemory(o, mem, filter.length ? memorySummary(filter) : undefined);
  }
  if (o.scenarios.has('h3') || o.scenarios.has('h4')) reportLatency(o, fanout);
  if (o.scenarios.has('h6') && filter.length) {
    const h3 = fanout.get('gatehouse-sse');
    console.log('');
    reportFilter(filter, h3?.length ? latencySummary(h3).p99 : undefined);
  }
}

async function main(): Promise<void> {
  const o = options();
  // The orchestrator shares the load CPU with the client, never the server's.
  pinProcess(process.pid, loadCpu);
  const profileDir = o.cpuProf ? mkdtempSync(join(tmpdir(), 'push-hub-prof-')) : undefined;
  const pushpin = pushpinVersion();
  if (o.pushpin && !pushpin) {
    console.log('Pushpin is not installed (apt-get install -y pushpin): its side-by-side run is skipped.');
    o.pushpin = false;
  }
  const wsVersion = (createRequire(import.meta.url)('ws/package.json') as { version: string }).version;
  console.log(`Push hub benchmark — ${boxLine({ ws: wsVersion, ...(pushpin ? { pushpin } : {}) })}`);
  console.log(
    `N = ${o.n}, ${o.rounds} round(s), scenarios ${[...o.scenarios].join(',')}; hubs one at a time on cpu${serverCpu}, client and orchestrator on cpu${loadCpu}`,
  );
  const { fanout, filter } = plan(o, profileDir);
  const session: SessionOptions = { n: o.n, settleMs: 2000, batchSize: 500, batchIntervalMs: 20 };
  const fanoutResults = new Map<string, FanoutResult[]>(fanout.map((t) => [t.name, []]));
  const filterResults: FilterResult[] = [];

  let live: RunningHub | undefined;
  const client: PushClient = startPushClient(loadCpu);
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
    report(o, fanoutResults, filterResults);
    console.log(`\n(total ${((performance.now() - started) / 1000).toFixed(0)} s)`);
    if (profileDir) console.log(`Gatehouse CPU profiles: ${profileDir}`);
  } finally {
    emergency();
    await client.stop();
  }
}

await main();
