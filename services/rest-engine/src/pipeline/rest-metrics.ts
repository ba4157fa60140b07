/**
 * Prometheus metrics of the engine (names `gw_rest_…`) on the registry the host passes in. The
 * request path only bumps plain numbers; the registry reads them when scraped. prom-client's own
 * Counter and Histogram hash their labels on every call, which costs more than the rest of a
 * small request's bookkeeping together, so these metrics implement the registry's `get()` contract
 * themselves. One set per registry, shared by every engine on it.
 */
import type { Registry } from '@gatehouse/service-kit';

type Labels = Record<string, string>;
interface MetricValue {
  labels: Labels;
  value: number;
  metricName?: string;
}

interface MetricSnapshot {
  name: string;
  help: string;
  type: string;
  aggregator: 'sum';
  values: MetricValue[];
}

/** What Registry.registerMetric needs of a metric. */
interface CollectedMetric {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  aggregator: 'sum';
  get(): MetricSnapshot;
  reset(): void;
}

class LabelledCounter implements CollectedMetric {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  private readonly series = new Map<string, MetricValue>();

  constructor(name: string, help: string) {
    this.name = name;
    this.help = help;
  }

  /** The series for these labels, to keep and bump with `.value++`. */
  series_(key: string, labels: () => Labels): MetricValue {
    let s = this.series.get(key);
    if (s === undefined) {
      s = { labels: labels(), value: 0 };
      this.series.set(key, s);
    }
    return s;
  }

  get(): MetricSnapshot {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: [...this.series.values()],
    };
  }

  reset(): void {
    this.series.clear();
  }
}

class FastHistogram implements CollectedMetric {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  private readonly bounds: readonly number[];
  private counts: Float64Array;
  private sum = 0;
  private count = 0;

  constructor(name: string, help: string, bounds: readonly number[]) {
    this.name = name;
    this.help = help;
    this.bounds = bounds;
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && value > b[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }

  get(): MetricSnapshot {
    const values: MetricValue[] = [];
    let cumulative = 0;
    this.bounds.forEach((bound, i) => {
      cumulative += this.counts[i]!;
      values.push({ labels: { le: String(bound) }, value: cumulative, metricName: `${this.name}_bucket` });
    });
    values.push({ labels: { le: '+Inf' }, value: this.count, metricName: `${this.name}_bucket` });
    values.push({ labels: {}, value: this.sum, metricName: `${this.name}_sum` });
    values.push({ labels: {}, value: this.count, metricName: `${this.name}_count` });
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.counts = new Float64Array(this.bounds.length + 1);
    this.sum = 0;
    this.count = 0;
  }
}

class PlainGauge implements CollectedMetric {
  readonly type = 'gauge';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  value = 0;

  constructor(name: string, help: string) {
    this.name = name;
    this.help = help;
  }

  get(): MetricSnapshot {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: [{ labels: {}, value: this.value }],
    };
  }

  reset(): void {
    this.value = 0;
  }
}

const perRegistry = new WeakMap<Registry, RestMetrics>();

export class RestMetrics {
  private readonly requests = new LabelledCounter(
    'gw_rest_requests_total',
    'HTTP requests answered by the REST engine, by status',
  );
  private readonly duration = new FastHistogram(
    'gw_rest_request_duration_seconds',
    'Time from request arrival to the response head, in seconds',
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  );
  private readonly calls = new LabelledCounter(
    'gw_rest_function_calls_total',
    'Function calls by route and outcome (ok, error, timeout)',
  );
  private readonly endpointGauge = new PlainGauge(
    'gw_rest_endpoints',
    'REST endpoints rendered from rest.yaml',
  );
  private readonly byStatus = new Map<number, MetricValue>();

  /** The metrics of this registry, made and registered on first use. */
  static of(registry: Registry): RestMetrics {
    let metrics = perRegistry.get(registry);
    if (!metrics) {
      metrics = new RestMetrics();
      for (const m of [metrics.requests, metrics.duration, metrics.calls, metrics.endpointGauge]) {
        // prom-client types want its own Metric class; the registry only calls get() and reset().
        registry.registerMetric(m as unknown as Parameters<Registry['registerMetric']>[0]);
      }
      perRegistry.set(registry, metrics);
    }
    return metrics;
  }

  private constructor() {}

  set endpoints(count: number) {
    this.endpointGauge.value = count;
  }

  /** `startedAt` from performance.now() at request arrival. */
  answered(status: number, startedAt: number): void {
    let series = this.byStatus.get(status);
    if (series === undefined) {
      series = this.requests.series_(String(status), () => ({ status: String(status) }));
      this.byStatus.set(status, series);
    }
    series.value++;
    this.duration.observe((performance.now() - startedAt) / 1000);
  }

  functionCall(route: string, outcome: 'ok' | 'error' | 'timeout'): void {
    this.calls.series_(outcome === 'ok' ? route : `${route} ${outcome}`, () => ({ route, outcome })).value++;
  }
}
