import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { S4Result } from '../src/cluster/scenarios.ts';
import { renderSvg, linesSpec } from '../src/report/plots.ts';
import { interestPoints, s4Points } from '../src/scaling-law-plot.ts';

/** A window of `seconds` with `events` and each process's CPU seconds. */
const window = (seconds: number, events: number, cpu: Record<string, number>) =>
  ({ seconds, events, deliveries: 0, cpu, boxBusy: 0 }) as unknown as S4Result['rows'][number]['steady'];

describe('scaling-law plot points', () => {
  it('sums the replicas less their quiet rate, leaves the bystander out, and gives the mean per replica', () => {
    const row = {
      replicas: 2,
      // hub-2 is the bystander: never counted
      quiet: window(10, 0, { 'hub-0': 1, 'hub-1': 2, 'hub-2': 5 }),
      steady: window(5, 100, { 'hub-0': 1.5, 'hub-1': 2, 'hub-2': 9 }),
      unwanted: window(5, 1000, { 'hub-0': 0.6, 'hub-1': 1.1, 'hub-2': 9 }),
    };
    const r = { rows: [row] } as unknown as S4Result;
    // steady: hub-0 (1.5 − 0.5) s and hub-1 (2 − 1) s over 100 events: 10,000 + 10,000 µs
    assert.deepEqual(s4Points(r, 'steady'), [
      { series: 'all replicas', x: 2, y: 20_000 },
      { series: 'one replica (mean)', x: 2, y: 10_000 },
    ]);
    // unwanted: (0.1 + 0.1) s over 1,000 events
    const unwanted = s4Points(r, 'unwanted');
    assert.ok(Math.abs(unwanted[0]!.y - 200) < 1e-6, String(unwanted[0]!.y));
    assert.ok(Math.abs(unwanted[1]!.y - 100) < 1e-6, String(unwanted[1]!.y));
  });

  it('skips rows of runs without an unwanted window', () => {
    const r = {
      rows: [{ replicas: 1, quiet: window(1, 0, { 'hub-0': 0 }), steady: window(1, 1, { 'hub-0': 0 }) }],
    } as unknown as S4Result;
    assert.deepEqual(s4Points(r, 'unwanted'), []);
    assert.equal(s4Points(r, 'steady').length, 2);
  });

  it('sums the replicas of an interest-routing row and keeps the NATS server apart, per mode', () => {
    const points = interestPoints([
      { mode: 'all', replicas: 2, perReplicaUs: [200, 220], natsPerEventUs: 350 },
      { mode: 'interest', replicas: 2, perReplicaUs: [-5, 3], natsPerEventUs: 210 },
    ]);
    assert.deepEqual(points, [
      { series: 'replicas (summed), all', x: 2, y: 420 },
      { series: 'NATS server, all', x: 2, y: 350 },
      { series: 'replicas (summed), interest', x: 2, y: -2 },
      { series: 'NATS server, interest', x: 2, y: 210 },
    ]);
  });

  it('renders the points as an SVG with one line per series', async () => {
    const svg = await renderSvg(
      linesSpec('t', 'replicas', 'µs', [
        { series: 'all replicas', x: 1, y: 1 },
        { series: 'all replicas', x: 2, y: 2 },
        { series: 'one replica (mean)', x: 2, y: 1 },
      ]),
    );
    assert.match(svg, /^<svg/);
    assert.match(svg, /all replicas/);
    assert.match(svg, /one replica \(mean\)/);
  });
});
