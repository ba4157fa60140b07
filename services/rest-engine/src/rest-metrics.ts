/**
 * Prometheus metrics of the engine, on the registry the host passes in (names `gw_rest_…`). Label
 * children are cached so the request path does no label hashing.
 */
import { Counter, Gauge, Histogram, metricOnce, type Registry } from '@gatehouse/service-kit';

export class RestMetrics {
  private readonly requests: Counter<'status'>;
  private readonly duration: Histogram;
  private readonly calls: Counter<'route' | 'outcome'>;
  readonly endpoints: Gauge;
  private readonly byStatus = new Map<number, Counter.Internal>();
  private readonly byCall = new Map<string, Counter.Internal>();

  constructor(registry: Registry) {
    this.requests = metricOnce(
      registry,
      'gw_rest_requests_total',
      () =>
        new Counter({
          name: 'gw_rest_requests_total',
          help: 'HTTP requests answered by the REST engine, by status',
          labelNames: ['status'],
          registers: [registry],
        }),
    );
    this.duration = metricOnce(
      registry,
      'gw_rest_request_duration_seconds',
      () =>
        new Histogram({
          name: 'gw_rest_request_duration_seconds',
          help: 'Time from request arrival to the response head, in seconds',
          buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
          registers: [registry],
        }),
    );
    this.calls = metricOnce(
      registry,
      'gw_rest_function_calls_total',
      () =>
        new Counter({
          name: 'gw_rest_function_calls_total',
          help: 'Function calls by route and outcome (ok, error, timeout)',
          labelNames: ['route', 'outcome'],
          registers: [registry],
        }),
    );
    this.endpoints = metricOnce(
      registry,
      'gw_rest_endpoints',
      () =>
        new Gauge({
          name: 'gw_rest_endpoints',
          help: 'REST endpoints rendered from rest.yaml',
          registers: [registry],
        }),
    );
  }

  /** `startedAt` from performance.now() at request arrival. */
  answered(status: number, startedAt: number): void {
    let child = this.byStatus.get(status);
    if (child === undefined) {
      child = this.requests.labels(String(status));
      this.byStatus.set(status, child);
    }
    child.inc();
    this.duration.observe((performance.now() - startedAt) / 1000);
  }

  functionCall(route: string, outcome: 'ok' | 'error' | 'timeout'): void {
    const key = outcome === 'ok' ? route : `${route} ${outcome}`;
    let child = this.byCall.get(key);
    if (child === undefined) {
      child = this.calls.labels(route, outcome);
      this.byCall.set(key, child);
    }
    child.inc();
  }
}
