/**
 * The report's flows section (flows.bench.ts --json): each flow against its chained baseline, as
 * rps and CPU ratios with the per-task overhead, for every engine the run measured (`--compare`
 * puts another checkout's engine in the same rounds: before and after side by side), and a plot of
 * the ratios against the goal.
 */
import type { FlowsJson } from '../flows.bench.ts';
import { barsSpec, type renderSvg } from './plots.ts';

type Plot = (file: string, spec: Parameters<typeof renderSvg>[0], alt: string) => Promise<void>;
type Table = (head: string[], rows: string[][]) => string;

export async function flowsSection(j: FlowsJson, parts: string[], plot: Plot, table: Table): Promise<void> {
  const x = (v: number) => `${v.toFixed(2)}×`;
  const engineName = (e: FlowsJson['engines'][number]) =>
    j.engines.length > 1 ? `${e.label} (${e.checkout.replace(/\/$/, '').split('/').pop()})` : e.label;
  parts.push(
    `${j.box}; ${j.rounds} rounds; load average ${j.load.map((l) => l.toFixed(1)).join(' at start, ')} at end.`,
    '',
    table(
      [
        'engine',
        'flow vs baseline',
        `rps ratio (goal ≥ ${j.goal}×)`,
        'CPU µs/request, flow vs baseline',
        `CPU ratio (goal ≥ ${j.goal}×)`,
        'per-task overhead',
      ],
      j.engines.flatMap((e) =>
        e.comparisons.map((c) => [
          engineName(e),
          `${c.flow} (${c.tasks} tasks) vs ${c.baseline}`,
          x(c.rpsRatio),
          `${c.flowCpuUs.toFixed(1)} vs ${c.baselineCpuUs.toFixed(1)}`,
          x(c.cpuRatio),
          `${c.perTaskUs.toFixed(1)} µs`,
        ]),
      ),
    ),
    '',
  );
  const rows = j.engines.flatMap((e) =>
    e.comparisons.flatMap((c) => [
      { group: `${c.flow} by CPU`, series: engineName(e), value: c.cpuRatio },
      { group: `${c.flow} by rps`, series: engineName(e), value: c.rpsRatio },
    ]),
  );
  await plot(
    'ratios.svg',
    barsSpec(`Flows vs the same functions chained (goal ≥ ${j.goal}×)`, 'ratio to baseline (median)', rows),
    'flow ratios',
  );
}
