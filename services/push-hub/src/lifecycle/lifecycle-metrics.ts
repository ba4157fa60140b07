/** The lifecycle events' Prometheus metrics (prefix gw_lifecycle_events_). */
import { type Counter, counter, type Gauge, gauge, type Registry } from '@gatehouse/service-kit';

export class LifecycleMetrics {
  private readonly producedTotal: Counter;
  private readonly droppedTotal: Counter<'reason'>;
  private readonly failures: Counter;
  private readonly buffer: Gauge;

  constructor(registry: Registry) {
    this.producedTotal = counter(registry, {
      name: 'gw_lifecycle_events_produced_total',
      help: 'Lifecycle events (gw.connection.*, gw.subscriptions.changed …) the bus took',
    });
    this.droppedTotal = counter(registry, {
      name: 'gw_lifecycle_events_dropped_total',
      help: 'Lifecycle events dropped: buffer_full (LIFECYCLE_EVENTS_MAX_BUFFER or _BYTES reached, e.g. while the bus is down) or shutdown (still buffered when the drain window ended)',
      labelNames: ['reason'],
    });
    this.failures = counter(registry, {
      name: 'gw_lifecycle_events_publish_failures_total',
      help: 'Batches of lifecycle events the bus refused in part or whole (they are tried again)',
    });
    this.buffer = gauge(registry, {
      name: 'gw_lifecycle_events_buffered',
      help: 'Lifecycle events waiting to be produced',
    });
    // Present from the start, so an alert on them need not wait for the first drop.
    this.droppedTotal.inc({ reason: 'buffer_full' }, 0);
    this.droppedTotal.inc({ reason: 'shutdown' }, 0);
  }

  produced(n: number): void {
    if (n > 0) this.producedTotal.inc(n);
  }

  dropped(reason: 'buffer_full' | 'shutdown'): void {
    this.droppedTotal.inc({ reason });
  }

  failed(): void {
    this.failures.inc();
  }

  buffered(n: number): void {
    this.buffer.set(n);
  }
}
