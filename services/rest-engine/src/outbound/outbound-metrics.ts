/**
 * What flows published, by function and outcome (`gw_rest_flow_published_total{function, status}`:
 * 200 published, else the flow exception's status). No topic label: flows may build topics from
 * request data, and a label per topic would let a caller grow the registry without bound.
 */
import { type Counter, counter, type Registry } from '@gatehouse/service-kit';

export class OutboundMetrics {
  private readonly published: Counter<'function' | 'status'>;

  constructor(registry: Registry) {
    this.published = counter(registry, {
      name: 'gw_rest_flow_published_total',
      help: 'Publishes by flow functions (kafka.notification, nats.notification, gatehouse.event.publish), by status: 200 published, 4xx refused, 503 a broker or the registry unavailable',
      labelNames: ['function', 'status'],
    });
  }

  count(route: string, status: number): void {
    this.published.inc({ function: route, status: String(status) });
  }
}
