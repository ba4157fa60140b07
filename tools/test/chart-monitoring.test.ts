/**
 * The chart's dashboard and alerts read metrics the services really export: every `gw_` name in
 * charts/gatehouse/templates/prometheusrule.yaml, dashboards/gatehouse.json and the promtool unit
 * tests is defined in a service's or package's source (a histogram's `_bucket`, `_sum` and `_count`
 * only where the name is a histogram). A renamed metric would otherwise leave an alert that never
 * fires and a panel that stays empty, with every other check green. And the dashboard is portable:
 * no data source uid of anyone's Grafana, every query scoped by the `namespace` and `job` variables.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const root = fileURLToPath(new URL('../..', import.meta.url));
const chart = join(root, 'charts/gatehouse');

function sourceFiles(): string[] {
  const files: string[] = [];
  for (const group of ['packages', 'services'])
    for (const name of readdirSync(join(root, group))) {
      const src = join(root, group, name, 'src');
      try {
        for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' }))
          if (file.endsWith('.ts')) files.push(join(src, file));
      } catch {
        // a package without src/
      }
    }
  return files;
}

/** Every `gw_` metric name the sources define, and which of them are histograms. */
function definedMetrics(): { names: Set<string>; histograms: Set<string> } {
  const names = new Set<string>();
  const histograms = new Set<string>();
  for (const file of sourceFiles()) {
    const text = readFileSync(file, 'utf8');
    for (const [, name] of text.matchAll(/'(gw_[a-z0-9_]+)'/g)) names.add(name!);
    // service-kit's histogram(registry, { name: … }) and the REST engine's own FastHistogram.
    for (const [, name] of text.matchAll(
      /(?:histogram\(\s*registry,\s*\{\s*name:|new FastHistogram\()\s*'(gw_[a-z0-9_]+)'/g,
    ))
      histograms.add(name!);
  }
  return { names, histograms };
}

function usedMetrics(): Map<string, string> {
  const used = new Map<string, string>();
  const files = [
    'templates/prometheusrule.yaml',
    'dashboards/gatehouse.json',
    ...readdirSync(join(chart, 'tests/promtool')).map((f) => `tests/promtool/${f}`),
  ];
  for (const file of files)
    for (const [name] of readFileSync(join(chart, file), 'utf8').matchAll(/\bgw_[a-z0-9_]+\b/g))
      used.set(name, file);
  return used;
}

describe('chart monitoring', () => {
  it('reads only metrics the services define', () => {
    const { names, histograms } = definedMetrics();
    const used = usedMetrics();
    assert.ok(used.size >= 15, `found only ${used.size} metric names in the chart`);
    const unknown: string[] = [];
    for (const [name, file] of used) {
      const base = name.replace(/_(bucket|sum|count)$/, '');
      const known = names.has(name) || (base !== name && histograms.has(base));
      if (!known) unknown.push(`${name} (${file})`);
    }
    assert.deepEqual(unknown, [], 'metric names no source defines');
  });

  it('ships a dashboard with a datasource variable, scoped by namespace and job', () => {
    const dashboard = JSON.parse(readFileSync(join(chart, 'dashboards/gatehouse.json'), 'utf8')) as {
      templating: { list: Array<{ name: string; type: string }> };
      panels: Array<{
        type: string;
        datasource?: { uid: string };
        targets?: Array<{ expr: string; datasource: { uid: string } }>;
      }>;
    };
    assert.deepEqual(
      dashboard.templating.list.map((v) => `${v.name}:${v.type}`),
      ['datasource:datasource', 'namespace:query', 'job:query'],
    );
    const graphs = dashboard.panels.filter((p) => p.type !== 'row');
    assert.ok(graphs.length > 10);
    for (const panel of graphs) {
      assert.equal(panel.datasource?.uid, '${datasource}');
      for (const target of panel.targets ?? []) {
        assert.equal(target.datasource.uid, '${datasource}');
        for (const selector of target.expr.match(/\{[^}]*\}/g) ?? [])
          assert.match(selector, /namespace="\$namespace", job=~"\$job"/, target.expr);
      }
    }
  });
});
