/**
 * Issue 21's side-by-side: Gatehouse SSE over HTTP/2 next to HTTP/1.1 with TLS and plain HTTP/1.1,
 * from one run's medians (memory per connection as H1 reads it, latency and CPU per delivery as H3),
 * with the ratios h2 / h1-TLS and h2 / h1-plain. A connection is one SSE stream, so with ten streams
 * per session "per connection" is per stream (a tenth of a session each).
 *
 * It names what it reads of each hub's medians by its own rows' fields, not by the report's types:
 * the report imports this file to print the tables.
 */

export interface Http2Row {
  hub: string;
  label: string;
  rssNoGc: number;
  rss: number;
  reducedRss: number;
  p50: number;
  p99: number;
  p99Min: number;
  p99Max: number;
  cpuPerDelivery: number;
  clientCpuPerDelivery: number;
}

export interface Http2Ratio {
  candidate: string;
  baseline: string;
  rssNoGc: number;
  rss: number;
  reducedRss: number;
  p50: number;
  p99: number;
  cpuPerDelivery: number;
}

export interface Http2Comparison {
  rows: Http2Row[];
  ratios: Http2Ratio[];
}

const labels: Record<string, string> = {
  'gatehouse-sse': 'HTTP/1.1 plain',
  'gatehouse-sse-tls': 'HTTP/1.1 + TLS',
  'gatehouse-sse-h2': 'HTTP/2 (TLS), 1 stream/session',
  'gatehouse-sse-h2x10': 'HTTP/2 (TLS), 10 streams/session',
};

const pairs: Array<[candidate: string, baseline: string]> = [
  ['gatehouse-sse-tls', 'gatehouse-sse'],
  ['gatehouse-sse-h2', 'gatehouse-sse-tls'],
  ['gatehouse-sse-h2', 'gatehouse-sse'],
  ['gatehouse-sse-h2x10', 'gatehouse-sse-tls'],
  ['gatehouse-sse-h2x10', 'gatehouse-sse'],
];

/** What the comparison reads of each hub's memory and latency summaries: its rows' fields. */
type Memory = Pick<Http2Row, 'rssNoGc' | 'rss' | 'reducedRss'>;
type Latency = Pick<
  Http2Row,
  'p50' | 'p99' | 'p99Min' | 'p99Max' | 'cpuPerDelivery' | 'clientCpuPerDelivery'
>;

export function http2Comparison(memory: Map<string, Memory>, latency: Map<string, Latency>): Http2Comparison {
  const rows: Http2Row[] = [];
  for (const [hub, label] of Object.entries(labels)) {
    const m = memory.get(hub);
    const l = latency.get(hub);
    if (!m || !l) continue;
    rows.push({
      hub,
      label,
      rssNoGc: m.rssNoGc,
      rss: m.rss,
      reducedRss: m.reducedRss,
      p50: l.p50,
      p99: l.p99,
      p99Min: l.p99Min,
      p99Max: l.p99Max,
      cpuPerDelivery: l.cpuPerDelivery,
      clientCpuPerDelivery: l.clientCpuPerDelivery,
    });
  }
  const byHub = new Map(rows.map((r) => [r.hub, r]));
  const ratios = pairs.flatMap(([candidate, baseline]) => {
    const c = byHub.get(candidate);
    const b = byHub.get(baseline);
    if (!c || !b) return [];
    return [
      {
        candidate,
        baseline,
        rssNoGc: c.rssNoGc / b.rssNoGc,
        rss: c.rss / b.rss,
        reducedRss: c.reducedRss / b.reducedRss,
        p50: c.p50 / b.p50,
        p99: c.p99 / b.p99,
        cpuPerDelivery: c.cpuPerDelivery / b.cpuPerDelivery,
      },
    ];
  });
  return { rows, ratios };
}

const kib = (b: number) => `${(b / 1024).toFixed(1)} KiB`;
const ms = (x: number) => x.toFixed(x < 10 ? 1 : 0);
const times = (r: number) => `${r.toFixed(2)}×`;

/** The two tables (rows, then ratios) as Markdown: printed by the benchmark and put in the report. */
export function http2Tables(c: Http2Comparison): string {
  const head = (cells: string[]) => [`| ${cells.join(' | ')} |`, `|${cells.map(() => '---').join('|')}|`];
  const rows = [
    ...head([
      'hub',
      'RSS/conn no GC',
      'after GC',
      'young gen shrunk',
      'p50 / p99 [range] ms',
      'server CPU/delivery',
      'client CPU/delivery',
    ]),
    ...c.rows.map(
      (r) =>
        `| ${r.label} | ${kib(r.rssNoGc)} | ${kib(r.rss)} | ${kib(r.reducedRss)} | ${ms(r.p50)} / ${ms(r.p99)} [${ms(r.p99Min)}–${ms(r.p99Max)}] | ${r.cpuPerDelivery.toFixed(1)} µs | ${r.clientCpuPerDelivery.toFixed(1)} µs |`,
    ),
  ];
  const ratios = [
    ...head(['ratio', 'RSS/conn no GC', 'after GC', 'young gen shrunk', 'p50', 'p99', 'server CPU/delivery']),
    ...c.ratios.map(
      (r) =>
        `| ${labels[r.candidate]} / ${labels[r.baseline]} | ${times(r.rssNoGc)} | ${times(r.rss)} | ${times(r.reducedRss)} | ${times(r.p50)} | ${times(r.p99)} | ${times(r.cpuPerDelivery)} |`,
    ),
  ];
  return [...rows, '', ...ratios].join('\n');
}
