/**
 * Prometheus metrics. One registry per process: in the embedded runner every service registers on
 * the same registry, so metric names carry the `gw_` prefix and never the service name.
 */
import {
  Counter,
  type CounterConfiguration,
  collectDefaultMetrics,
  Gauge,
  type GaugeConfiguration,
  Histogram,
  type HistogramConfiguration,
  Registry,
} from 'prom-client';

export { Counter, Gauge, Histogram, Registry };

export function createRegistry(defaultLabels: Record<string, string> = {}): Registry {
  const registry = new Registry();
  registry.setDefaultLabels(defaultLabels);
  collectDefaultMetrics({ register: registry, prefix: 'gw_' });
  // prom-client names three gauges `_total`, which Prometheus reserves for counters (promtool
  // rejects them); each is the sum of the per-type gauge of the same name without the suffix.
  for (const name of ['active_handles', 'active_requests', 'active_resources']) {
    registry.removeSingleMetric(`gw_nodejs_${name}_total`);
  }
  return registry;
}

/** Returns the metric already registered under `name`, or registers the one `create` makes. */
export function metricOnce<T>(registry: Registry, name: string, create: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create();
}

type Config<T> = Omit<T, 'registers'>;

/** A counter on `registry`; services sharing a registry (the embedded runner) share it by name. */
export function counter<L extends string>(
  registry: Registry,
  config: Config<CounterConfiguration<L>>,
): Counter<L> {
  return metricOnce(registry, config.name, () => new Counter({ ...config, registers: [registry] }));
}

export function gauge<L extends string>(registry: Registry, config: Config<GaugeConfiguration<L>>): Gauge<L> {
  return metricOnce(registry, config.name, () => new Gauge({ ...config, registers: [registry] }));
}

export function histogram<L extends string>(
  registry: Registry,
  config: Config<HistogramConfiguration<L>>,
): Histogram<L> {
  return metricOnce(registry, config.name, () => new Histogram({ ...config, registers: [registry] }));
}
