import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { http2Comparison } from '../src/push-hub/http2-comparison.ts';
import { writeReport } from '../src/report/write-report.ts';

const dir = mkdtempSync(join(tmpdir(), 'bench-report-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const quantiles = (from: number, to: number) =>
  Array.from({ length: 201 }, (_, k) => from + ((to - from) * k) / 200);
const memory = (rss: number, gc: string) => ({
  gc,
  rss,
  rssMin: rss,
  rssMax: rss,
  rssNoGc: rss,
  reducedRss: rss,
  heap: null,
  loadedRss: rss * 10_000,
});
const latency = (p50: number, p99: number) => ({
  p50,
  p99,
  p99Min: p99,
  p99Max: p99,
  max: p99,
  cpuPerDelivery: 20,
  cpuMin: 19,
  cpuMax: 21,
  clientCpuPerDelivery: 5,
  cdf: quantiles(p50 / 2, p99),
});

it('writes every table and one SVG per scenario, rendered by vega, and a latest.md copy', async () => {
  const pushHub = {
    box: 'box: test',
    n: 10_000,
    rounds: 1,
    load: ['1.0', 1.2],
    memory: {
      'B-sse': memory(17_000, 'node'),
      nchan: memory(10_000, 'none'),
      centrifugo: memory(60_000, 'go'),
    },
    latency: {
      'B-sse': latency(100, 200),
      nchan: latency(80, 120),
      'gatehouse-sse': latency(110, 210),
      'gatehouse-sse-kafka': latency(130, 240),
      'B-ws': latency(90, 180),
    },
    brokerHops: [
      {
        kind: 'kafka',
        p50: 130,
        p99: 240,
        max: 240,
        added: { p50: 20, p99: 30, max: 30 },
        goalMs: 50,
        met: true,
      },
    ],
    goals: [{ goal: 'SSE p99 ≤ Nchan p99', value: '210 vs 120 ms', met: false }],
    http2: http2Comparison(
      new Map([
        ['gatehouse-sse', memory(12_000, 'node')],
        ['gatehouse-sse-tls', memory(30_000, 'node')],
        ['gatehouse-sse-h2', memory(45_000, 'node')],
      ]),
      new Map([
        ['gatehouse-sse', latency(100, 200)],
        ['gatehouse-sse-tls', latency(150, 250)],
        ['gatehouse-sse-h2', latency(300, 500)],
      ]),
    ),
  };
  const bus = {
    rows: [
      {
        broker: 'kafka',
        raw: [900, 1000],
        adapter: [950, 980],
        rawMedian: 1000,
        adapterMedian: 950,
        ratio: 0.95,
      },
    ],
  };
  const file = await writeReport(dir, [
    { bench: 'push-hub', status: 0, seconds: 1, text: 'printed', json: pushHub },
    { bench: 'bus-throughput', status: 0, seconds: 1, text: 'printed', json: bus },
    { bench: 'rest-engine', status: 0, seconds: 1, text: 'R1 0.9× meets' },
  ]);
  const md = readFileSync(file, 'utf8');
  assert.match(md, /\| nchan \| no GC \(C\/Rust\) \| 9\.8 KiB \|/);
  assert.match(md, /\| centrifugo \| runtime\.GC \(pprof gc=1\) \|/);
  assert.match(md, /\| kafka \| 130 \/ 240 \/ 240 \| 20 \/ 30 \/ 30 \| ≤ 50 ms \| meets \|/);
  assert.match(md, /\| kafka \| 1000 \[900–1000\] \| 950 \[950–980\] \| 0\.95× \|/);
  assert.match(md, /R1 0\.9× meets/);
  assert.match(md, /### HTTP\/2 next to HTTP\/1\.1/);
  assert.match(
    md,
    /\| HTTP\/2 \(TLS\), 1 stream\/session \| 43\.9 KiB \| 43\.9 KiB \| 43\.9 KiB \| 300 \/ 500 \[500–500\] \| 20\.0 µs \| 5\.0 µs \|/,
  );
  assert.match(
    md,
    /\| HTTP\/2 \(TLS\), 1 stream\/session \/ HTTP\/1\.1 \+ TLS \| 1\.50× \| 1\.50× \| 1\.50× \| 2\.00× \| 2\.00× \| 1\.00× \|/,
  );
  assert.match(
    md,
    /\| HTTP\/2 \(TLS\), 1 stream\/session \/ HTTP\/1\.1 plain \| 3\.75× \| 3\.75× \| 3\.75× \| 3\.00× \| 2\.50× \| 1\.00× \|/,
  );
  const plots = readdirSync(join(dir, file.slice(dir.length + 1, -3))).sort();
  assert.deepEqual(plots, [
    'bus-throughput-bus-throughput.svg',
    'push-hub-h3-broker-latency-cdf.svg',
    'push-hub-h3-sse-latency-cdf.svg',
    'push-hub-h4-ws-latency-cdf.svg',
    'push-hub-memory-per-connection.svg',
  ]);
  for (const svg of plots) {
    assert.ok(md.includes(`/${svg})`), `${svg} linked`);
    const text = readFileSync(join(dir, file.slice(dir.length + 1, -3), svg), 'utf8');
    assert.match(text, /^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  }
  const cdf = readFileSync(
    join(dir, file.slice(dir.length + 1, -3), 'push-hub-h3-sse-latency-cdf.svg'),
    'utf8',
  );
  for (const hub of ['B-sse', 'nchan', 'gatehouse-sse'])
    assert.ok(cdf.includes(`>${hub}<`), `${hub} in the legend`);
  assert.ok(!cdf.includes('>gatehouse-sse-kafka<'), 'broker runs have their own plot');
  assert.ok(existsSync(join(dir, 'latest.md')));
});

it('writes the flows section: each engine of the run, its ratios against the goal, and their plot', async () => {
  const flowsDir = mkdtempSync(join(tmpdir(), 'bench-report-flows-'));
  after(() => rmSync(flowsDir, { recursive: true, force: true }));
  const target = (name: string, tasks: number, cpu: number) => ({
    name,
    path: `/${name}`,
    tasks,
    rps: [1000],
    cpuPerRequestUs: [cpu],
  });
  const engine = (label: string, checkout: string, seqCpu: number, seqRatio: number) => ({
    label,
    checkout,
    targets: [target('F1 chain', 1, 30), target('F2 seq', 3, seqCpu)],
    comparisons: [
      {
        flow: 'F2 seq',
        baseline: 'F1 chain',
        tasks: 3,
        rpsRatio: seqRatio,
        cpuRatio: 30 / seqCpu,
        flowCpuUs: seqCpu,
        baselineCpuUs: 30,
        perTaskUs: (seqCpu - 30) / 3,
      },
    ],
  });
  const flows = {
    box: 'box: test',
    goal: 0.6,
    rounds: 5,
    load: [1.5, 2.5],
    engines: [engine('this', '/work/wt-after/', 45, 0.7), engine('compared', '/work/wt-before', 60, 0.5)],
  };
  const file = await writeReport(flowsDir, [
    { bench: 'flows', status: 0, seconds: 200, text: 'printed', json: flows },
  ]);
  const md = readFileSync(file, 'utf8');
  assert.match(md, /load average 1\.5 at start, 2\.5 at end/);
  assert.match(
    md,
    /\| this \(wt-after\) \| F2 seq \(3 tasks\) vs F1 chain \| 0\.70× \| 45\.0 vs 30\.0 \| 0\.67× \| 5\.0 µs \|/,
  );
  assert.match(
    md,
    /\| compared \(wt-before\) \| F2 seq \(3 tasks\) vs F1 chain \| 0\.50× \| 60\.0 vs 30\.0 \| 0\.50× \| 10\.0 µs \|/,
  );
  const svg = readdirSync(join(flowsDir, readdirSync(flowsDir).find((d) => !d.endsWith('.md'))!));
  assert.deepEqual(svg, ['flows-ratios.svg']);
  assert.ok(md.includes('flows-ratios.svg)'));
});
