/**
 * The report's plots, as Vega-Lite specs compiled and rendered to SVG by `vega-lite` and `vega` in
 * Node (the headless View renders SVG without a canvas): latency CDFs of hubs side by side, memory
 * per connection as grouped bars, throughput as grouped bars, warm-up rounds as lines.
 */
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

const width = 560;
const height = 300;

export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}

/** What every plot shares: the schema, its title, size, background and data. */
function frame(title: string, values: object[]) {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    width,
    height,
    background: 'white',
    data: { values },
  };
}

/** One line per series: x the latency (ms), y the fraction of deliveries that arrived by then. */
export function cdfSpec(title: string, series: Record<string, number[]>): TopLevelSpec {
  const values = Object.entries(series).flatMap(([hub, quantiles]) =>
    quantiles.map((ms, k) => ({ hub, ms, fraction: k / (quantiles.length - 1) })),
  );
  return {
    ...frame(title, values),
    mark: { type: 'line', interpolate: 'step-after' },
    encoding: {
      x: { field: 'ms', type: 'quantitative', title: 'publish → arrival (ms)' },
      y: { field: 'fraction', type: 'quantitative', title: 'fraction of deliveries', axis: { format: '%' } },
      color: { field: 'hub', type: 'nominal', title: 'hub' },
    },
  };
}

/** Grouped bars: one group per `group`, one bar per `series` within it. */
export function barsSpec(
  title: string,
  yTitle: string,
  rows: Array<{ group: string; series: string; value: number }>,
): TopLevelSpec {
  return {
    ...frame(title, rows),
    width: { step: 18 },
    mark: 'bar',
    encoding: {
      x: { field: 'group', type: 'nominal', title: null, sort: null, axis: { labelAngle: -30 } },
      xOffset: { field: 'series', type: 'nominal' },
      y: { field: 'value', type: 'quantitative', title: yTitle },
      color: { field: 'series', type: 'nominal', title: null },
      tooltip: [{ field: 'value', type: 'quantitative', format: '.1f' }],
    },
  };
}

/** One line per series over an integer x (rounds): where a rate stops changing. */
export function linesSpec(
  title: string,
  xTitle: string,
  yTitle: string,
  points: Array<{ series: string; x: number; y: number }>,
): TopLevelSpec {
  return {
    ...frame(title, points),
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'x', type: 'quantitative', title: xTitle, axis: { tickMinStep: 1 } },
      y: { field: 'y', type: 'quantitative', title: yTitle },
      color: { field: 'series', type: 'nominal', title: null },
    },
  };
}
