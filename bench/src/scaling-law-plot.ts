/**
 * The replica scaling law as plots (issue 35): how a cluster's CPU per event grows with its replicas,
 * drawn from the JSON the benches wrote, so a result folder gets its plots without a rerun.
 *
 * - `--s4 <file>`: cluster-scale.bench.ts `--scenarios s4 --json <file>` (Kafka, every replica
 *   reading the whole stream): per replica count, the replicas' CPU per event of the flowing types
 *   and per event nobody wants, each less the replicas' quiet rate, summed over the replicas and per
 *   replica (`s4-scaling-law-steady.svg`, `s4-scaling-law-unwanted.svg`).
 * - `--interest <file>`: interest-routing.bench.ts `--json <file>` (NATS, FANOUT_ROUTING all against
 *   interest): the replicas' CPU and the NATS server's per unwanted event (`interest-scaling-law.svg`).
 *
 * Run: `node bench/src/scaling-law-plot.ts [--s4 <file>] [--interest <file>] --out <dir>`.
 */
import './harness/help.ts'; // first: --help prints the comment above and exits before anything runs
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { lessQuiet } from './cluster/report.ts';
import type { S4Result } from './cluster/scenarios.ts';
import { linesSpec, renderSvg } from './report/plots.ts';

type Point = { series: string; x: number; y: number };

/**
 * Per replica count: the replicas' CPU less their quiet rate, per event of `window` (`steady`: the
 * flowing types; `unwanted`: a type nobody subscribes to), summed over the replicas and per replica.
 */
export function s4Points(r: S4Result, window: 'steady' | 'unwanted'): Point[] {
  return r.rows.flatMap((row) => {
    const w = row[window];
    if (w === undefined) return []; // a run from before S4 had an unwanted window
    const hubs = Object.keys(w.cpu)
      .filter((k) => k.startsWith('hub-'))
      .slice(0, row.replicas);
    const sum = hubs.reduce((a, k) => a + lessQuiet(w, row.quiet, k), 0);
    return [
      { series: 'all replicas', x: row.replicas, y: sum },
      { series: 'one replica (mean)', x: row.replicas, y: sum / row.replicas },
    ];
  });
}

interface InterestRow {
  mode: 'all' | 'interest';
  replicas: number;
  perReplicaUs: number[];
  natsPerEventUs: number;
}

/** Per replica count and mode: the replicas' CPU per unwanted event (summed) and the NATS server's. */
export function interestPoints(rows: InterestRow[]): Point[] {
  return rows.flatMap((row) => [
    {
      series: `replicas (summed), ${row.mode}`,
      x: row.replicas,
      y: row.perReplicaUs.reduce((a, v) => a + v, 0),
    },
    { series: `NATS server, ${row.mode}`, x: row.replicas, y: row.natsPerEventUs },
  ]);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { s4: { type: 'string' }, interest: { type: 'string' }, out: { type: 'string' } },
  });
  if (!values.out || (!values.s4 && !values.interest))
    throw new Error('usage: --s4 <json> | --interest <json>, --out <dir>');
  if (values.s4) {
    const r = (JSON.parse(readFileSync(values.s4, 'utf8')) as { s4: S4Result }).s4;
    const what = { steady: 'an event of the flowing types', unwanted: 'an event nobody wants' } as const;
    for (const window of ['steady', 'unwanted'] as const) {
      const spec = linesSpec(
        `S4 on Kafka (${r.options.connections} connections, every replica reads the stream): ${what[window]}`,
        'replicas',
        'CPU µs per event, less the quiet rate',
        s4Points(r, window),
      );
      writeFileSync(join(values.out, `s4-scaling-law-${window}.svg`), await renderSvg(spec));
    }
  }
  if (values.interest) {
    const rows = (JSON.parse(readFileSync(values.interest, 'utf8')) as { rows: InterestRow[] }).rows;
    const spec = linesSpec(
      'An event nobody wants on NATS: FANOUT_ROUTING all (every replica reads it) or interest',
      'replicas',
      'CPU µs per unwanted event',
      interestPoints(rows),
    );
    writeFileSync(join(values.out, 'interest-scaling-law.svg'), await renderSvg(spec));
  }
}

if (import.meta.main) await main();
