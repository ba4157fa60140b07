/**
 * The report's section for mercury.bench.ts: per block (one CPU, two CPUs, 200 endpoints) a table
 * of every row with both servers' medians and the ratio Gatehouse ÷ Mercury, the memory and load
 * of each server, and plots: req/s and CPU per request by row, and the warm-up curve.
 */
import { median } from '../harness/stats.ts';
import type { MercuryJson, RowResult } from '../mercury/results.ts';
import { barsSpec, linesSpec, type renderSvg } from './plots.ts';

type Plot = (file: string, spec: Parameters<typeof renderSvg>[0], alt: string) => Promise<void>;

const table = (head: string[], rows: string[][]) =>
  [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
const fixed = (x: number, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : '–');
const range = (v: number[]) => `[${fixed(Math.min(...v))}–${fixed(Math.max(...v))}]`;

/** Gatehouse ÷ Mercury for one figure of one row: above 1 is Gatehouse ahead for req/s. */
export function rowRatios(g: RowResult, m: RowResult): { rps: number; cpu: number; p99: number } {
  return {
    rps: median(g.rps) / median(m.rps),
    cpu: median(g.cpuUs) / median(m.cpuUs),
    p99: median(g.p99) / median(m.p99),
  };
}

/**
 * Who leads a row. On a busy box the two figures can disagree: the scheduler shares a CPU among
 * runnable threads, so a JVM with many threads gets more of it than Node's one; CPU per request
 * does not depend on that share.
 */
function verdict(r: { rps: number; cpu: number }): string {
  if (r.rps >= 1 && r.cpu <= 1) return 'Gatehouse ahead';
  if (r.rps < 1 && r.cpu > 1) return 'Mercury ahead';
  return r.cpu <= 1 ? 'Gatehouse by CPU, Mercury by req/s' : 'Gatehouse by req/s, Mercury by CPU';
}

export async function mercurySection(j: MercuryJson, parts: string[], plot: Plot): Promise<void> {
  parts.push(
    `${j.box}; ${j.java}; ${j.rounds} rounds per row; load average ${fixed(j.load[0], 1)} at start, ${fixed(j.load[1], 1)} at end (2 CPUs: above 2 other work shared the box).`,
    '',
  );
  const bars: Array<{ group: string; series: string; value: number }> = [];
  const cpuBars: Array<{ group: string; series: string; value: number }> = [];
  const warm: Array<{ series: string; x: number; y: number }> = [];
  for (const b of j.blocks) {
    const g = b.servers.gatehouse;
    const m = b.servers.mercury;
    if (!g || !m) continue;
    parts.push(`### ${b.id}: ${b.cores} CPU${b.cores > 1 ? 's' : ''} for the server`, '');
    parts.push(
      table(
        [
          'row',
          'Gatehouse req/s [min–max]',
          'Mercury req/s [min–max]',
          'req/s ratio',
          'CPU µs/request G / M',
          'requests per CPU-second ratio',
          'p99 ms G / M',
          '',
        ],
        b.rows.map((row) => {
          const [gr, mr] = [g.rows[row.id]!, m.rows[row.id]!];
          const r = rowRatios(gr, mr);
          return [
            `${row.id}: ${row.what}`,
            `${fixed(median(gr.rps))} ${range(gr.rps)}`,
            `${fixed(median(mr.rps))} ${range(mr.rps)}`,
            `${r.rps.toFixed(2)}×`,
            `${fixed(median(gr.cpuUs), 1)} / ${fixed(median(mr.cpuUs), 1)}`,
            `${(1 / r.cpu).toFixed(2)}×`,
            `${fixed(median(gr.p99), 2)} / ${fixed(median(mr.p99), 2)}`,
            verdict(r),
          ];
        }),
      ),
      '',
    );
    parts.push(
      table(
        [
          'server',
          'RSS idle MiB',
          'RSS under load MiB (most seen)',
          'warm-up rounds (total req/s)',
          'load average',
        ],
        (['gatehouse', 'mercury'] as const).map((name) => {
          const s = b.servers[name]!;
          return [
            name,
            fixed(s.idleRssMiB),
            fixed(s.loadRssMiB),
            s.warmup.map((x) => fixed(x)).join(' → '),
            `${fixed(s.load[0], 1)} → ${fixed(s.load[1], 1)}`,
          ];
        }),
      ),
      '',
    );
    for (const row of b.rows) {
      const group = b.cores > 1 ? `${row.id} (2 CPUs)` : row.id;
      for (const name of ['gatehouse', 'mercury'] as const) {
        bars.push({ group, series: name, value: median(b.servers[name]!.rows[row.id]!.rps) });
        cpuBars.push({ group, series: name, value: median(b.servers[name]!.rows[row.id]!.cpuUs) });
      }
    }
    for (const name of ['gatehouse', 'mercury'] as const) {
      const w = b.servers[name]!.warmup;
      for (const [k, y] of w.entries()) warm.push({ series: `${name}, ${b.id}`, x: k + 1, y: y / w.at(-1)! });
    }
  }
  if (!bars.length) return;
  await plot(
    'rps.svg',
    barsSpec('Gatehouse and Mercury: requests per second', 'req/s (median)', bars),
    'req/s by row',
  );
  await plot(
    'cpu-per-request.svg',
    barsSpec('Server CPU time per request (all threads)', 'µs per request (median)', cpuBars),
    'CPU per request by row',
  );
  await plot(
    'warm-up.svg',
    linesSpec(
      'Warm-up: each round’s total rate over the last round’s',
      'warm-up round',
      'rate ÷ last round',
      warm,
    ),
    'warm-up curve',
  );
}
