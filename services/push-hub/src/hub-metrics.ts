/** The hub's Prometheus metrics (prefix gw_). */
import { Counter, Gauge, metricOnce, type Registry } from '@gatehouse/service-kit';
import type { TransportKind } from './connection.ts';

export class HubMetrics {
  private readonly connections: Gauge<'transport'>;
  private readonly connectionsTotal: Counter<'transport'>;
  private readonly subscriptions: Gauge;
  private readonly forwarded: Counter<'type'>;
  private readonly deliveries: Counter;
  private readonly dropped: Counter<'reason'>;
  private readonly rejected: Counter<'transport' | 'reason'>;
  private readonly kills: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    this.connections = metricOnce(
      registry,
      'gw_connections',
      () =>
        new Gauge({
          name: 'gw_connections',
          help: 'Open frontend connections',
          labelNames: ['transport'],
          registers,
        }),
    );
    this.connectionsTotal = metricOnce(
      registry,
      'gw_connections_opened_total',
      () =>
        new Counter({
          name: 'gw_connections_opened_total',
          help: 'Frontend connections accepted',
          labelNames: ['transport'],
          registers,
        }),
    );
    this.subscriptions = metricOnce(
      registry,
      'gw_subscriptions',
      () => new Gauge({ name: 'gw_subscriptions', help: 'Subscriptions held by this replica', registers }),
    );
    this.forwarded = metricOnce(
      registry,
      'gw_events_forwarded_total',
      () =>
        new Counter({
          name: 'gw_events_forwarded_total',
          help: 'Fan-out events dispatched to this replica, by CloudEvent type',
          labelNames: ['type'],
          registers,
        }),
    );
    this.deliveries = metricOnce(
      registry,
      'gw_event_deliveries_total',
      () =>
        new Counter({
          name: 'gw_event_deliveries_total',
          help: 'Events delivered to connections',
          registers,
        }),
    );
    this.dropped = metricOnce(
      registry,
      'gw_events_dropped_total',
      () =>
        new Counter({
          name: 'gw_events_dropped_total',
          help: 'Fan-out events the hub could not read',
          labelNames: ['reason'],
          registers,
        }),
    );
    this.rejected = metricOnce(
      registry,
      'gw_connections_rejected_total',
      () =>
        new Counter({
          name: 'gw_connections_rejected_total',
          help: 'Connection attempts refused (bad_request, denied, rate_limited)',
          labelNames: ['transport', 'reason'],
          registers,
        }),
    );
    this.kills = metricOnce(
      registry,
      'gw_session_kills_total',
      () =>
        new Counter({
          name: 'gw_session_kills_total',
          help: 'Connections closed by a session kill',
          registers,
        }),
    );
  }

  connectionOpened(transport: TransportKind, subscriptions: number): void {
    this.connections.inc({ transport });
    this.connectionsTotal.inc({ transport });
    this.subscriptions.set(subscriptions);
  }

  connectionClosed(transport: TransportKind, subscriptions: number): void {
    this.connections.dec({ transport });
    this.subscriptions.set(subscriptions);
  }

  subscriptionsChanged(subscriptions: number): void {
    this.subscriptions.set(subscriptions);
  }

  eventDispatched(type: string, deliveries: number): void {
    this.forwarded.inc({ type });
    if (deliveries) this.deliveries.inc(deliveries);
  }

  eventDropped(reason: string): void {
    this.dropped.inc({ reason });
  }

  connectionRejected(transport: TransportKind, reason: string): void {
    this.rejected.inc({ transport, reason });
  }

  sessionKilled(connections: number): void {
    this.kills.inc(connections);
  }
}
