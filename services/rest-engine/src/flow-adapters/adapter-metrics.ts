/**
 * Prometheus metrics of the flow adapters (`gw_flow_adapter_…`), labelled by binding (`kafka:orders`,
 * `nats:orders.>`); the bindings are few (flow.adapter.max-bindings) and lag partitions are bounded
 * by kafka.flow.pattern.max-topics, so the label sets stay bounded.
 */
import { counter, type Counter, type Gauge, gauge, type Registry } from '@gatehouse/service-kit';

export type RecordOutcome = 'done' | 'dead_lettered' | 'dropped';

export class AdapterMetrics {
  readonly records: Counter<'binding' | 'outcome'>;
  readonly failures: Counter<'binding'>;
  readonly retries: Counter<'binding'>;
  readonly inFlight: Gauge<'binding'>;
  readonly consumerRestarts: Counter<'binding'>;
  readonly lag: Gauge<'binding' | 'topic' | 'partition'>;

  constructor(registry: Registry) {
    this.records = counter(registry, {
      name: 'gw_flow_adapter_records_total',
      help: 'Records a flow adapter finished, by outcome: done (its flow answered 2xx), dead_lettered, dropped (no dead-letter destination, or its write failed; core NATS beyond max-in-flight)',
      labelNames: ['binding', 'outcome'],
    });
    this.failures = counter(registry, {
      name: 'gw_flow_adapter_failures_total',
      help: 'Flow runs of adapter records that failed (an abort, a timeout or a non-2xx answer), retries included',
      labelNames: ['binding'],
    });
    this.retries = counter(registry, {
      name: 'gw_flow_adapter_retries_total',
      help: 'Flow runs of adapter records started again after a failure',
      labelNames: ['binding'],
    });
    this.inFlight = gauge(registry, {
      name: 'gw_flow_adapter_in_flight',
      help: 'Records of a binding in flows now',
      labelNames: ['binding'],
    });
    this.consumerRestarts = counter(registry, {
      name: 'gw_flow_adapter_consumer_restarts_total',
      help: "Tries to start a binding's consumer again after it died for good (backoff 1 s doubling to 30 s, jittered)",
      labelNames: ['binding'],
    });
    this.lag = gauge(registry, {
      name: 'gw_flow_adapter_consumer_lag',
      help: "Records of a Kafka binding's partition not yet committed by its group (end offset minus committed offset)",
      labelNames: ['binding', 'topic', 'partition'],
    });
  }
}
