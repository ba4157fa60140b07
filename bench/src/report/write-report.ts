/**
 * `make bench`'s report: bench/results/<date>-<host>.md with every benchmark's tables (the push hub
 * and bus tables built from their JSON results, every other benchmark's printed summary as is) and
 * an SVG per scenario next to it in bench/results/<date>-<host>/, plus bench/results/latest.md, a
 * copy of the newest report that bench/README.md links.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { type Http2Comparison, http2Tables } from '../push-hub/http2-comparison.ts';
import type { MercuryJson } from '../mercury/results.ts';
import { mercurySection } from './mercury-section.ts';
import type { FlowsJson } from '../flows.bench.ts';
import { flowsSection } from './flows-section.ts';
import { barsSpec, cdfSpec, renderSvg } from './plots.ts';

export interface BenchOutput {
  bench: string;
  status: number | null;
  seconds: number;
  /** What it printed. */
  text: string;
  /** Its --json results, for the benchmarks that write them. */
  json?: Record<string, unknown>;
}

interface MemoryRow {
  gc: 'node' | 'go' | 'none';
  rss: number;
  rssMin: number;
  rssMax: number;
  rssNoGc: number;
  reducedRss: number;
  heap?: number;
  loadedRss: number;
}
export interface LatencyRow {
  p50: number;
  p99: number;
  p99Min: number;
  p99Max: number;
  max: number;
  cpuPerDelivery: number;
  cpuMin: number;
  cpuMax: number;
  /** The client process's CPU time from publish to the last arrival, per delivery, µs (median). */
  clientCpuPerDelivery: number;
  /** Median over publishes of each quantile (0 %, 0.5 %, … 100 %), ms: the CDF to plot. */
  cdf: number[];
}
interface PushHubJson {
  box: string;
  n: number;
  rounds: number;
  load: [string, number];
  memory: Record<string, MemoryRow>;
  latency: Record<string, LatencyRow>;
  brokerHops: Array<{
    kind: string;
    p50: number;
    p99: number;
    max: number;
    added: { p50: number; p99: number; max: number };
    goalMs: number;
    met: boolean;
  }>;
  goals: Array<{ goal: string; value: string; met: boolean }>;
  filter?: { filterCostUs: number; deliveryCostUs: number; matchingP99Ms: number; matching: number };
  http2?: Http2Comparison;
}
interface BusJson {
  rows: Array<{
    broker: string;
    raw: number[];
    adapter: number[];
    rawMedian: number;
    adapterMedian: number;
    ratio: number;
  }>;
}

const kib = (b: number) => `${(b / 1024).toFixed(1)} KiB`;
const ms = (x: number) => x.toFixed(x < 10 ? 1 : 0);
const gcReading = {
  node: 'full GC (Node --expose-gc)',
  go: 'runtime.GC (pprof gc=1)',
  none: 'no GC (C/Rust)',
};
const table = (head: string[], rows: string[][]) =>
  [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');

export async function writeReport(
  resultsDir: string,
  outputs: BenchOutput[],
  date = new Date(),
): Promise<string> {
  const name = `${date.toISOString().slice(0, 10)}-${hostname()}`;
  const plotDir = join(resultsDir, name);
  mkdirSync(plotDir, { recursive: true });
  const parts: string[] = [
    `# Benchmarks ${date.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${hostname()}`,
    '',
  ];
  parts.push(
    'Numbers are comparable only within this report: every benchmark starts its baseline and candidate together, pins them, interleaves rounds and reports medians with their spread. See bench/README.md for the method of each.',
    '',
  );
  for (const o of outputs) {
    // Plots are named after their benchmark: two runs of one benchmark (different N) may share a report.
    const plot = async (file: string, spec: Parameters<typeof renderSvg>[0], alt: string) => {
      writeFileSync(join(plotDir, `${o.bench}-${file}`), await renderSvg(spec));
      parts.push(`![${alt}](${name}/${o.bench}-${file})`, '');
    };
    parts.push(`## ${o.bench}`, '', `exit ${o.status}, ${o.seconds.toFixed(0)} s`, '');
    if (o.bench.startsWith('push-hub') && o.json)
      await pushHubSection(o.json as unknown as PushHubJson, parts, plot);
    else if (o.bench.startsWith('bus-throughput') && o.json)
      await busSection(o.json as unknown as BusJson, parts, plot);
    else if (o.bench.startsWith('mercury') && o.json)
      await mercurySection(o.json as unknown as MercuryJson, parts, plot);
    else if (o.bench.startsWith('flows') && o.json)
      await flowsSection(o.json as unknown as FlowsJson, parts, plot, table);
    parts.push(
      '<details><summary>printed output</summary>',
      '',
      '```',
      o.text.trimEnd(),
      '```',
      '',
      '</details>',
      '',
    );
  }
  const file = join(resultsDir, `${name}.md`);
  writeFileSync(file, parts.join('\n'));
  copyFileSync(file, join(resultsDir, 'latest.md'));
  return file;
}

type Plot = (file: string, spec: Parameters<typeof renderSvg>[0], alt: string) => Promise<void>;

async function pushHubSection(j: PushHubJson, parts: string[], plot: Plot): Promise<void> {
  parts.push(
    `${j.box}; N = ${j.n}, ${j.rounds} round(s); load average ${j.load[0]} at start, ${j.load[1].toFixed(1)} at end (2 CPUs: above 2 the machine was busy with other work and the figures are noisy).`,
    '',
  );
  parts.push('### Memory per connection (H1, H2)', '');
  parts.push(
    table(
      [
        'hub',
        'GC before the reading',
        'RSS/conn no GC',
        'RSS/conn after GC [min–max]',
        'young gen shrunk',
        'heap/conn',
        'total RSS',
      ],
      Object.entries(j.memory).map(([hub, m]) => [
        hub,
        gcReading[m.gc],
        kib(m.rssNoGc),
        `${kib(m.rss)} [${kib(m.rssMin)}–${kib(m.rssMax)}]`,
        m.gc === 'node' ? kib(m.reducedRss) : '–',
        m.heap === undefined || m.heap === null ? '–' : kib(m.heap),
        `${(m.loadedRss / 2 ** 20).toFixed(0)} MiB`,
      ]),
    ),
    '',
  );
  const memRows = Object.entries(j.memory).flatMap(([hub, m]) => [
    { group: hub, series: 'RSS no GC', value: m.rssNoGc / 1024 },
    { group: hub, series: 'RSS after forced GC', value: m.rss / 1024 },
  ]);
  await plot(
    'memory-per-connection.svg',
    barsSpec('Idle memory per connection', 'KiB per connection', memRows),
    'memory per connection',
  );
  parts.push('### One event to all (H3, H4, H3-broker)', '');
  parts.push(
    table(
      ['hub', 'p50 ms', 'p99 ms [min–max]', 'max ms', 'server CPU µs/delivery [min–max]'],
      Object.entries(j.latency).map(([hub, l]) => [
        hub,
        ms(l.p50),
        `${ms(l.p99)} [${ms(l.p99Min)}–${ms(l.p99Max)}]`,
        ms(l.max),
        `${l.cpuPerDelivery.toFixed(1)} [${l.cpuMin.toFixed(1)}–${l.cpuMax.toFixed(1)}]`,
      ]),
    ),
    '',
  );
  const pick = (names: (n: string) => boolean) =>
    Object.fromEntries(
      Object.entries(j.latency)
        .filter(([n]) => names(n))
        .map(([n, l]) => [n, l.cdf]),
    );
  const wsHubs = new Set(['B-ws', 'gatehouse-ws']);
  const sse = pick((n) => !wsHubs.has(n) && !/-(kafka|kafka-tls|redis|nats)$/.test(n));
  const ws = pick((n) => wsHubs.has(n));
  const brokers = pick((n) => n === 'gatehouse-sse' || /-(kafka|kafka-tls|redis|nats)$/.test(n));
  if (Object.keys(sse).length)
    await plot(
      'h3-sse-latency-cdf.svg',
      cdfSpec(`H3: one event to ${j.n} SSE subscribers`, sse),
      'H3 latency CDF',
    );
  if (Object.keys(ws).length)
    await plot(
      'h4-ws-latency-cdf.svg',
      cdfSpec(`H4: one event to ${j.n} WebSocket subscribers`, ws),
      'H4 latency CDF',
    );
  if (j.brokerHops.length) {
    parts.push('### The broker in the loop (H3-kafka, H3-kafka-tls, H3-redis, H3-nats)', '');
    parts.push(
      table(
        [
          'broker',
          'p50 / p99 / max ms',
          'added over the memory bus p50 / p99 / max ms',
          'goal (added p99)',
          '',
        ],
        j.brokerHops.map((h) => [
          h.kind,
          `${ms(h.p50)} / ${ms(h.p99)} / ${ms(h.max)}`,
          `${ms(h.added.p50)} / ${ms(h.added.p99)} / ${ms(h.added.max)}`,
          `≤ ${h.goalMs} ms`,
          h.met ? 'meets' : 'misses',
        ]),
      ),
      '',
    );
    await plot(
      'h3-broker-latency-cdf.svg',
      cdfSpec('H3: memory bus vs publisher → broker → 2 hub replicas', brokers),
      'H3 broker latency CDF',
    );
  }
  if (j.filter) {
    parts.push(
      `H6: filter cost ${j.filter.filterCostUs.toFixed(3)} µs per subscriber per event, one delivery ${j.filter.deliveryCostUs.toFixed(1)} µs, p99 to the ${j.filter.matching} matching ${ms(j.filter.matchingP99Ms)} ms.`,
      '',
    );
  }
  if (j.http2?.rows.length) {
    parts.push('### HTTP/2 next to HTTP/1.1 (issue 21)', '');
    parts.push(
      `Gatehouse SSE, N = ${j.n} streams: plain HTTP/1.1, HTTP/1.1 over TLS (node:https clients) and HTTP/2 over TLS (node:http2, one session per client origin), same run.`,
      '',
      http2Tables(j.http2),
      '',
    );
  }
  if (j.goals.length) {
    parts.push('### Where Gatehouse stands against the goals of issue 16', '');
    parts.push(
      table(
        ['goal', 'this run', ''],
        j.goals.map((g) => [g.goal, g.value, g.met ? 'meets' : 'misses']),
      ),
      '',
    );
  }
}

async function busSection(j: BusJson, parts: string[], plot: Plot): Promise<void> {
  const range = (v: number[]) => `[${Math.min(...v).toFixed(0)}–${Math.max(...v).toFixed(0)}]`;
  parts.push(
    table(
      ['broker', 'raw msg/s [min–max]', 'adapter msg/s [min–max]', 'ratio (goal ≥ 0.80×)'],
      j.rows.map((r) => [
        r.broker,
        `${r.rawMedian.toFixed(0)} ${range(r.raw)}`,
        `${r.adapterMedian.toFixed(0)} ${range(r.adapter)}`,
        `${r.ratio.toFixed(2)}×`,
      ]),
    ),
    '',
  );
  const rows = j.rows.flatMap((r) => [
    { group: r.broker, series: 'raw client', value: r.rawMedian },
    { group: r.broker, series: 'adapter', value: r.adapterMedian },
  ]);
  await plot(
    'bus-throughput.svg',
    barsSpec('Bus: messages per second, publish to subscriber', 'messages/s (median)', rows),
    'bus throughput',
  );
}
