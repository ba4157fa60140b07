/**
 * The report's Mercury section (report/mercury-section.ts): each block's rows with both servers'
 * medians and Gatehouse ÷ Mercury, a server's memory and warm-up rounds, and three plots rendered
 * by vega; a block where one server did not run is left out rather than shown half.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import type { MercuryJson, ServerResult } from '../src/mercury/results.ts';
import { writeReport } from '../src/report/write-report.ts';

const dir = mkdtempSync(join(tmpdir(), 'bench-mercury-report-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const server = (rps: number[], cpuUs: number, idle: number, warmup: number[]): ServerResult => ({
  load: [1.5, 2.5],
  idleRssMiB: idle,
  loadRssMiB: idle + 20,
  warmup,
  rows: {
    echo: { rps, cpuUs: [cpuUs, cpuUs + 2, cpuUs - 2], p99: [3, 4, 5], errors: 0 },
    flow: { rps: rps.map((x) => x / 4), cpuUs: [cpuUs * 2], p99: [9], errors: 0 },
  },
});
const rows = [
  { id: 'echo', what: 'an echo function' },
  { id: 'flow', what: 'three no.op tasks' },
];

it('tables each row with both medians and the ratio, memory and warm-up per server, and plots', async () => {
  const json: MercuryJson = {
    box: 'box: test',
    java: 'openjdk version "25.0.3"',
    load: [1.2, 3.4],
    rounds: 3,
    blocks: [
      {
        id: 'main-1',
        cores: 1,
        rows,
        servers: {
          gatehouse: server([50_000, 60_000, 55_000], 18, 135, [40_000, 41_000]),
          mercury: server([10_000, 14_000, 12_000], 70, 240, [5_000, 11_000, 12_000]),
        },
      },
      // Mercury did not run here: no table, no bars.
      { id: 'main-2', cores: 2, rows, servers: { gatehouse: server([1, 2, 3], 1, 1, [1]) } },
    ],
  };
  const file = await writeReport(dir, [{ bench: 'mercury', status: 0, seconds: 1, text: 'printed', json }]);
  const md = readFileSync(file, 'utf8');
  assert.match(md, /load average 1\.2 at start, 3\.4 at end/);
  assert.match(
    md,
    /\| echo: an echo function \| 55000 \[50000–60000\] \| 12000 \[10000–14000\] \| 4\.58× \| 18\.0 \/ 70\.0 \| 3\.89× \| 4\.00 \/ 4\.00 \| Gatehouse ahead \|/,
  );
  assert.match(md, /\| flow: three no\.op tasks \| 13750 \[12500–15000\] \| 3000 \[2500–3500\] \| 4\.58× \|/);
  assert.match(md, /\| mercury \| 240 \| 260 \| 5000 → 11000 → 12000 \| 1\.5 → 2\.5 \|/);
  assert.ok(!md.includes('### main-2'), 'a block without both servers is left out');
  const plotDir = join(dir, file.slice(dir.length + 1, -3));
  const plots = readdirSync(plotDir).sort();
  assert.deepEqual(plots, ['mercury-cpu-per-request.svg', 'mercury-rps.svg', 'mercury-warm-up.svg']);
  for (const svg of plots) assert.match(readFileSync(join(plotDir, svg), 'utf8'), /^<svg /);
  const warm = readFileSync(join(plotDir, 'mercury-warm-up.svg'), 'utf8');
  for (const series of ['gatehouse, main-1', 'mercury, main-1'])
    assert.ok(warm.includes(`>${series}<`), series);
});

it('names who leads by which figure where req/s and CPU per request disagree', async () => {
  const json: MercuryJson = {
    box: 'box: test',
    java: 'java',
    load: [1, 1],
    rounds: 1,
    blocks: [
      {
        id: 'routes-1',
        cores: 1,
        rows: [rows[0]!],
        servers: { gatehouse: server([900], 10, 1, [1]), mercury: server([1000], 20, 1, [1]) },
      },
    ],
  };
  const md = readFileSync(
    await writeReport(dir, [{ bench: 'mercury', status: 0, seconds: 1, text: '', json }]),
    'utf8',
  );
  assert.match(
    md,
    /\| 0\.90× \| 10\.0 \/ 20\.0 \| 2\.00× \| 4\.00 \/ 4\.00 \| Gatehouse by CPU, Mercury by req\/s \|/,
  );
});
