/** Presence's Prometheus metrics (prefix gw_presence_). */
import { type Counter, counter, gauge, type Registry } from '@gatehouse/service-kit';

export class PresenceMetrics {
  private readonly changes: Counter<'kind'>;
  private readonly overflow: Counter;
  private readonly queries: Counter<'api' | 'answer'>;

  constructor(registry: Registry, members: () => number) {
    this.changes = counter(registry, {
      name: 'gw_presence_events_total',
      help: 'Presence changes this replica told its subscribers of (each one once, however many connections got it)',
      labelNames: ['kind'],
    });
    this.overflow = counter(registry, {
      name: 'gw_presence_overflow_total',
      help: 'Members not announced: PRESENCE_MAX_MEMBERS were announced already',
    });
    this.queries = counter(registry, {
      name: 'gw_presence_queries_total',
      help: 'Cluster-wide presence queries this replica made, by API and whether every replica answered',
      labelNames: ['api', 'answer'],
    });
    gauge(registry, {
      name: 'gw_presence_members',
      help: 'Members announced as present (joined, not yet left), cluster-wide, as this replica knows them',
      collect() {
        this.set(members());
      },
    });
  }

  told(kind: 'joined' | 'left'): void {
    this.changes.inc({ kind });
  }

  overflowed(): void {
    this.overflow.inc();
  }

  queried(api: 'internal' | 'public', partial: boolean): void {
    this.queries.inc({ api, answer: partial ? 'partial' : 'complete' });
  }
}
