/**
 * Readiness as metrics, so alerts can tell which dependency took a replica out of its Service:
 * - `gw_ready`: 1 when `/ready` would answer 200, 0 when a check fails or the replica is draining.
 * - `gw_dependency_up{dependency}`: 1 or 0 per readiness check (store, fanout-bus, control-bus …),
 *   named as in `/ready`'s `checks`.
 * The checks run when Prometheus scrapes, not on a timer: no scrape, no pings. Both gauges share
 * one run per scrape (prom-client collects every metric of a scrape at once).
 */
import type { Registry } from 'prom-client';
import type { Health, ReadinessReport } from './health.ts';
import { gauge } from './metrics.ts';

export function exportReadiness(registry: Registry, health: Health): void {
  let running: Promise<ReadinessReport> | undefined;
  const report = () => {
    running ??= health.readiness().finally(() => {
      running = undefined;
    });
    return running;
  };
  gauge(registry, {
    name: 'gw_ready',
    help: 'Whether this replica is ready (1) or not (0: a dependency is down, or it is shutting down), as /ready answers',
    async collect() {
      this.set((await report()).ready ? 1 : 0);
    },
  });
  gauge(registry, {
    name: 'gw_dependency_up',
    help: 'Whether each dependency of the readiness check answers (1) or not (0), by the check name /ready shows',
    labelNames: ['dependency'],
    async collect() {
      const { checks } = await report();
      for (const [dependency, result] of Object.entries(checks))
        if (dependency !== 'shutdown') this.set({ dependency }, result === 'ok' ? 1 : 0);
    },
  });
}
