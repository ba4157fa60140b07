/**
 * One hub's turn in the push-hub benchmark: start it, measure its memory idle, open N connections
 * from the client process, let them settle, measure again (H1/H2: the difference per connection),
 * then publish and time the deliveries (H3/H4: fan-out; H6: filter cost), close, stop.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { PushClient } from '../clients/push-client-process.ts';
import { percentile } from '../harness/stats.ts';
import { benchEvent, stampNow } from './bench-event.ts';
import type { GcKind, HubMemory, HubTarget, RunningHub } from './hub-targets.ts';

export interface SessionOptions {
  n: number;
  /** Pause after the last connection answered, before memory is read. */
  settleMs: number;
  /** Paced connects (performance-anchors §6.4: 500 every 20 ms). */
  batchSize: number;
  batchIntervalMs: number;
}

export interface Spread {
  p50: number;
  p99: number;
  max: number;
}

export interface FanoutSample extends Spread {
  delivered: number;
  /** Latency quantiles 0 %, 0.5 %, … 100 % of this publish's deliveries, ms (for CDF plots). */
  quantiles: number[];
  /** Connections the hub closed before this event (they are not waited for). */
  closed: number;
  /** Server CPU time from publish to the last arrival, per delivery, in µs. */
  serverCpuUsPerDelivery: number;
  /** Client CPU time in that interval, in ms (the client parses every frame: part of the latency). */
  clientCpuMs: number;
}

export interface MemoryResult {
  connected: number;
  /** Connect attempts the hub reset or refused, made again by the client. */
  retried: number;
  connectMs: number;
  idle: HubMemory;
  loaded: HubMemory;
  /** How memory was read after a forced GC (node, go, or none: no GC). */
  gc: GcKind;
  rssPerConnection: number;
  /** VmRSS delta ÷ N before any forced GC (every hub read the same way). */
  rssNoGcPerConnection: number;
  /** The same after memory-reducing GCs (young generation shrunk in both readings). */
  reducedRssPerConnection: number;
  heapPerConnection: number | undefined;
}

export interface FanoutResult extends MemoryResult {
  target: string;
  publishes: FanoutSample[];
}

export function spread(values: number[]): Spread {
  return { p50: percentile(values, 50), p99: percentile(values, 99), max: Math.max(...values) };
}

/** Quantiles at 0 %, 0.5 %, … 100 % (201 points, nearest rank) of unsorted values. */
export function quantiles(values: number[]): number[] {
  const sorted = Float64Array.from(values).sort();
  return Array.from({ length: 201 }, (_, k) => {
    const rank = Math.ceil((k / 200) * sorted.length);
    return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
  });
}

/** Starts the hub, runs `body` against it with N connections open, and always cleans up. */
async function withConnectedHub<T>(
  target: HubTarget,
  client: PushClient,
  o: SessionOptions,
  onStart: (hub: RunningHub) => void,
  body: (hub: RunningHub, memory: MemoryResult) => Promise<T>,
): Promise<T> {
  const hub = await target.start();
  onStart(hub);
  try {
    await sleep(500);
    const idle = await hub.memory('idle');
    const c = await client.connect({
      transport: hub.transport,
      port: hub.port,
      ports: hub.ports,
      ...(hub.wire && { wire: hub.wire }),
      paths: hub.paths,
      count: o.n,
      batchSize: target.connectPacing?.batchSize ?? o.batchSize,
      batchIntervalMs: o.batchIntervalMs,
      maxPending: target.connectPacing?.maxPending ?? 2 * o.batchSize,
      timeoutMs: 120_000,
    });
    if (c.connected < o.n) {
      throw new Error(
        `${target.name}: ${c.connected}/${o.n} connected, ${c.failed} failed (${c.firstError})`,
      );
    }
    // A TLS row whose connections fell back to another protocol would measure that one under its name.
    const protocol = hub.wire?.protocol ?? 'tcp';
    if (c.protocols[protocol] !== c.connected) {
      throw new Error(`${target.name}: expected ${protocol} on all, got ${JSON.stringify(c.protocols)}`);
    }
    await sleep(o.settleMs);
    const loaded = await hub.memory('loaded');
    const memory: MemoryResult = {
      connected: c.connected,
      retried: c.retried,
      connectMs: c.ms,
      idle,
      loaded,
      gc: hub.gc,
      rssPerConnection: (loaded.rss - idle.rss) / o.n,
      rssNoGcPerConnection: (loaded.rssNoGc - idle.rssNoGc) / o.n,
      reducedRssPerConnection: (loaded.reducedRss - idle.reducedRss) / o.n,
      heapPerConnection:
        loaded.heap === undefined || idle.heap === undefined ? undefined : (loaded.heap - idle.heap) / o.n,
    };
    return await body(hub, memory);
  } finally {
    await client.closeAll().catch(() => undefined);
    await hub.stop();
  }
}

/**
 * Publishes one event and waits for its `expected` deliveries (out of `n` connections; a connection
 * the hub closed meanwhile is excused); returns their latencies (ms) and how many connections closed.
 */
async function publishAndCollect(
  hub: RunningHub,
  client: PushClient,
  event: { type: string; group: string; expected: number; n: number },
): Promise<{ latencies: number[]; closed: number }> {
  const stamp = stampNow();
  await hub.publish(benchEvent(event.type, event.group, stamp));
  if (event.expected === 0) return { latencies: [], closed: 0 };
  const r = await client.arrivals(stamp, event.expected, event.expected === event.n, 20_000);
  const closed = event.n - r.open;
  if (r.latenciesMs.length < event.expected - closed || r.latenciesMs.length > event.expected) {
    throw new Error(
      `${event.type}: ${r.latenciesMs.length} of ${event.expected} deliveries arrived (${r.open} of ${event.n} connections open)`,
    );
  }
  return { latencies: r.latenciesMs, closed };
}

/**
 * H1/H3/H4 (and Pushpin side by side): N connections with one subscription each, idle memory per
 * connection, then `publishes` events `gapMs` apart, each to all N.
 */
export async function fanoutSession(
  target: HubTarget,
  client: PushClient,
  o: SessionOptions & { publishes: number; gapMs: number },
  onStart: (hub: RunningHub) => void,
): Promise<FanoutResult> {
  return withConnectedHub(target, client, o, onStart, async (hub, memory) => {
    const publishes: FanoutSample[] = [];
    for (let k = 0; k < o.publishes; k++) {
      const due = performance.now() + o.gapMs;
      const serverCpu = hub.cpuSeconds();
      const clientCpu = client.cpuSeconds();
      const { latencies, closed } = await publishAndCollect(hub, client, {
        type: 'bench',
        group: 'all',
        expected: o.n,
        n: o.n,
      });
      publishes.push({
        ...spread(latencies),
        quantiles: quantiles(latencies),
        delivered: latencies.length,
        closed,
        serverCpuUsPerDelivery: ((hub.cpuSeconds() - serverCpu) / o.n) * 1e6,
        clientCpuMs: (client.cpuSeconds() - clientCpu) * 1e3,
      });
      if (k < o.publishes - 1) await sleep(Math.max(0, due - performance.now()));
    }
    return { target: target.name, ...memory, publishes };
  });
}

/** The H2/H6 extractor configuration: subscriptions may constrain `group` (at /data/group). */
export const GROUP_EXTRACTORS = JSON.stringify({
  bench: { group: { stable_field_index: 0, event: { json_pointer: '/data/group' } } },
});

/**
 * The subscriptions of H2/H6 connection i (5 each, 1 with a filter): `bench` where group = g, where
 * g is `hot` for every tenth connection; `bench.ctl.hot` or `bench.ctl.cold` without a filter (the
 * hot ones' control type: same deliveries, no filter); three types never published.
 */
export function groupSubscriptions(groups: number): unknown[][] {
  return Array.from({ length: groups }, (_, k) => {
    const hot = k === 0;
    return [
      { eventType: 'bench', oneOf: [{ group: hot ? 'hot' : `cold${k}` }] },
      { eventType: hot ? 'bench.ctl.hot' : 'bench.ctl.cold' },
      { eventType: 'bench.idle.1' },
      { eventType: 'bench.idle.2' },
      { eventType: 'bench.idle.3' },
    ];
  });
}

interface EventKind {
  name: 'filtered' | 'control' | 'none';
  type: string;
  group: string;
  expected: number;
}

export interface FilterResult extends MemoryResult {
  target: string;
  /** Server CPU per event (schedstat), µs, by kind: median over the events of that kind. */
  cpuPerEventUs: Record<EventKind['name'], number>;
  /** (filtered − control) ÷ N from the medians: the filter cost per subscriber per event, µs. */
  filterCostUs: number;
  /** The same from the means (every GC pause included wherever it fell). */
  filterCostMeanUs: number;
  /** The same from /proc/<pid>/stat utime + stime totals (10 ms ticks): a coarser cross-check. */
  filterCostStatUs: number;
  /** (control − none) ÷ matching, from the medians: what one delivery costs, µs. */
  deliveryCostUs: number;
  matching: number;
  /** Measured events per kind. */
  eventsPerKind: number;
  /** Latency to the matching subscribers of the filtered events: medians over the events. */
  filteredLatency: Spread;
}

/**
 * H2 (memory with 5 subscriptions + 1 filter per connection) and H6 (filter cost). Three kinds of
 * event take turns (the order rotating), each published after the previous one's deliveries arrived:
 * `bench` group=hot (all N filters evaluated, N/10 match), `bench.ctl.hot` (the same N/10
 * connections, no filter: only they are indexed under that type) and `bench.none` (no subscriber:
 * the fixed cost of publishing and dispatching). The hub's CPU time is read around every event from
 * /proc/<pid>/task/<tid>/schedstat (ns; /proc/<pid>/stat ticks at 10 ms, too coarse for one event, so it
 * only serves as a total cross-check); medians per kind keep GC pauses from landing on one side.
 * Filter cost per subscriber = (filtered − control) ÷ N; one delivery = (control − none) ÷ matching.
 */
export async function filterSession(
  target: HubTarget,
  client: PushClient,
  o: SessionOptions & { groups: number; warmup: number; events: number },
  onStart: (hub: RunningHub) => void,
): Promise<FilterResult> {
  return withConnectedHub(target, client, o, onStart, async (hub, memory) => {
    const matching = Math.ceil(o.n / o.groups);
    const kinds: EventKind[] = [
      { name: 'filtered', type: 'bench', group: 'hot', expected: matching },
      { name: 'control', type: 'bench.ctl.hot', group: 'hot', expected: matching },
      { name: 'none', type: 'bench.none', group: 'hot', expected: 0 },
    ];
    for (let w = 0; w < o.warmup; w++) {
      for (const k of kinds) await publishAndCollect(hub, client, { ...k, n: o.n });
    }
    const cpu = { filtered: [] as number[], control: [] as number[], none: [] as number[] };
    const statCpu = { filtered: 0, control: 0, none: 0 };
    const p50s: number[] = [];
    const p99s: number[] = [];
    const maxes: number[] = [];
    for (let e = 0; e < o.events; e++) {
      for (let i = 0; i < kinds.length; i++) {
        const k = kinds[(i + e) % kinds.length]!;
        const before = hub.cpuSeconds();
        const statBefore = hub.statCpuSeconds?.() ?? 0;
        const { latencies } = await publishAndCollect(hub, client, { ...k, n: o.n });
        cpu[k.name].push((hub.cpuSeconds() - before) * 1e6);
        statCpu[k.name] += (hub.statCpuSeconds?.() ?? 0) - statBefore;
        if (k.name === 'filtered') {
          const s = spread(latencies);
          p50s.push(s.p50);
          p99s.push(s.p99);
          maxes.push(s.max);
        }
      }
    }
    const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
    const filtered = percentile(cpu.filtered, 50);
    const control = percentile(cpu.control, 50);
    const none = percentile(cpu.none, 50);
    return {
      target: target.name,
      ...memory,
      cpuPerEventUs: { filtered, control, none },
      filterCostUs: (filtered - control) / o.n,
      filterCostMeanUs: (mean(cpu.filtered) - mean(cpu.control)) / o.n,
      filterCostStatUs: (((statCpu.filtered - statCpu.control) / o.events) * 1e6) / o.n,
      deliveryCostUs: (control - none) / matching,
      matching,
      eventsPerKind: o.events,
      filteredLatency: { p50: percentile(p50s, 50), p99: percentile(p99s, 50), max: percentile(maxes, 50) },
    };
  });
}
