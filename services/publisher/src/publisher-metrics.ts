/** The publisher's Prometheus metrics (prefix gw_), labelled by source and topic as RIG does. */
import { type Counter, type Histogram, type Registry, counter, histogram } from '@gatehouse/service-kit';

export class PublisherMetrics {
  private readonly consumed: Counter<'source' | 'topic'>;
  private readonly failed: Counter<'source' | 'topic' | 'reason'>;
  private readonly duration: Histogram<'source' | 'topic'>;
  private readonly produced: Counter<'target' | 'topic'>;
  private readonly produceFailed: Counter<'target' | 'topic'>;

  constructor(registry: Registry) {
    this.consumed = counter(registry, {
      name: 'gw_consumed_events_total',
      help: 'Events taken in, by source and topic',
      labelNames: ['source', 'topic'],
    });
    this.failed = counter(registry, {
      name: 'gw_consumed_events_failed_total',
      help: 'Events that could not be taken in (malformed, invalid, denied, unsupported, reserved: a gw.… type or the source gatehouse, fanout_unavailable)',
      labelNames: ['source', 'topic', 'reason'],
    });
    this.duration = histogram(registry, {
      name: 'gw_consumed_event_processing_duration_seconds',
      help: 'Time from receiving an event to its acceptance by the fan-out stream',
      labelNames: ['source', 'topic'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    });
    this.produced = counter(registry, {
      name: 'gw_produced_events_total',
      help: 'Events produced, by target and topic',
      labelNames: ['target', 'topic'],
    });
    this.produceFailed = counter(registry, {
      name: 'gw_produced_events_failed_total',
      help: 'Events that could not be produced',
      labelNames: ['target', 'topic'],
    });
  }

  consumedOk(source: string, topic: string, seconds: number): void {
    this.consumed.inc({ source, topic });
    this.duration.observe({ source, topic }, seconds);
  }

  consumedFailed(source: string, topic: string, reason: string): void {
    this.failed.inc({ source, topic, reason });
  }

  producedOk(target: string, topic: string): void {
    this.produced.inc({ target, topic });
  }

  producedFailed(target: string, topic: string): void {
    this.produceFailed.inc({ target, topic });
  }
}
