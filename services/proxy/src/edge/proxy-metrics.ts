/**
 * The proxy's Prometheus metrics (prefix gw_). Requests are labelled by the matched endpoint's
 * `path_regex`, as RIG's docs promised (its code used the raw request path, so a metric grew a
 * series per URL ever seen, reference §9.12); unmatched requests carry `path_regex="N/A"`.
 */
import {
  type Counter,
  type Histogram,
  type Registry,
  counter,
  gauge,
  histogram,
} from '@gatehouse/service-kit';

export type RequestStatus =
  | 'ok'
  | 'bad_request'
  | 'not_found'
  | 'unauthorized'
  | 'unreachable'
  | 'target_refused'
  | 'request_timeout'
  | 'response_timeout'
  | 'unavailable';

export interface RequestLabels {
  method: string;
  path_regex: string;
  target: string;
  response_from: string;
}

export interface EndpointMetrics {
  done(status: RequestStatus, startedAt: number): void;
}

type RequestLabelNames = 'method' | 'path_regex' | 'target' | 'response_from' | 'status';

export class ProxyMetrics {
  private readonly requests: Counter<RequestLabelNames>;
  private readonly duration: Histogram<'path_regex' | 'target'>;
  private readonly produced: Counter<'target' | 'topic'>;
  private readonly producedFailed: Counter<'target' | 'topic'>;
  private readonly responses: Counter<'source' | 'result'>;

  constructor(registry: Registry, pendingCount: () => number) {
    this.requests = counter(registry, {
      name: 'gw_proxy_requests_total',
      help: 'Proxied requests by endpoint path_regex, target, response_from and outcome',
      labelNames: ['method', 'path_regex', 'target', 'response_from', 'status'],
    });
    this.duration = histogram(registry, {
      name: 'gw_proxy_request_duration_seconds',
      help: 'Time from request to the end of the answer (whole streamed body), by endpoint path_regex and target',
      labelNames: ['path_regex', 'target'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    });
    this.produced = counter(registry, {
      name: 'gw_produced_events_total',
      help: 'Request events published by the proxy',
      labelNames: ['target', 'topic'],
    });
    this.producedFailed = counter(registry, {
      name: 'gw_produced_events_failed_total',
      help: 'Request events the broker did not accept',
      labelNames: ['target', 'topic'],
    });
    this.responses = counter(registry, {
      name: 'gw_proxy_correlated_responses_total',
      help: 'Correlated responses received, by source and what became of them',
      labelNames: ['source', 'result'],
    });
    gauge(registry, {
      name: 'gw_proxy_pending_responses',
      help: 'Requests on this replica waiting for a correlated response',
      collect() {
        this.set(pendingCount());
      },
    });
  }

  request(labels: RequestLabels, status: RequestStatus, startedAt: number): void {
    this.requests.inc({ ...labels, status });
    if (labels.path_regex !== 'N/A')
      this.duration.observe(
        { path_regex: labels.path_regex, target: labels.target },
        (performance.now() - startedAt) / 1000,
      );
  }

  /**
   * The metrics of one endpoint and method, with prom-client's labelled children kept, so the hot
   * path does not hash label sets on every request.
   */
  forEndpoint(labels: RequestLabels): EndpointMetrics {
    const counters = new Map<RequestStatus, { inc(): void }>();
    const duration = this.duration.labels({ path_regex: labels.path_regex, target: labels.target });
    return {
      done: (status, startedAt) => {
        let counter = counters.get(status);
        if (counter === undefined) {
          counter = this.requests.labels({ ...labels, status });
          counters.set(status, counter);
        }
        counter.inc();
        duration.observe((performance.now() - startedAt) / 1000);
      },
    };
  }

  eventProduced(target: string, topic: string, ok: boolean): void {
    (ok ? this.produced : this.producedFailed).inc({ target, topic });
  }

  correlatedResponse(source: string, result: string): void {
    this.responses.inc({ source, result });
  }
}
