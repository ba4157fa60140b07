/**
 * Prometheus metrics. One registry per process: in the embedded runner every service registers on
 * the same registry, so metric names carry the `gw_` prefix and never the service name.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';

export { Counter, Gauge, Histogram, Registry } from 'prom-client';

export function createRegistry(defaultLabels: Record<string, string> = {}): Registry {
  const registry = new Registry();
  registry.setDefaultLabels(defaultLabels);
  collectDefaultMetrics({ register: registry, prefix: 'gw_' });
  return registry;
}

/** Returns the metric already registered under `name`, or registers the one `create` makes. */
export function metricOnce<T>(registry: Registry, name: string, create: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create();
}
