/**
 * The replica's delivery core: the connections it holds, their subscriptions, the recent events of
 * the fan-out stream, and sessions (for kills). Transports add and remove connections; the fan-out
 * consumer dispatches every stream event; each matching connection gets it exactly once. While
 * tracing, each dispatched event is one delivery span (delivery-span.ts).
 */
import { isTracingActive } from '@gatehouse/tracing';
import type { Connection } from './connection.ts';
import { type FanoutSource, traceDelivery } from './delivery-span.ts';
import { EventRing } from './event-ring.ts';
import type { ExtractorConfig } from './extractor-config.ts';
import {
  connectionCreated,
  type OutgoingEvent,
  resyncRequired,
  sessionKilled,
  subscriptionsSet,
} from './gateway-events.ts';
import type { HubMetrics } from './hub-metrics.ts';
import type { Subscription } from './subscription.ts';
import { SubscriptionIndex } from './subscription-index.ts';

export interface HubOptions {
  extractors: ExtractorConfig;
  /** Recent fan-out events kept for Last-Event-ID and long-poll cursors. */
  ringCapacity: number;
  metrics: HubMetrics;
  /** Where dispatched events come from; with it, each delivery is a span while tracing. */
  fanout?: FanoutSource;
}

export class Hub {
  readonly ring: EventRing;
  readonly index: SubscriptionIndex<Connection>;
  private readonly connections = new Map<string, Connection>();
  private readonly sessions = new Map<string, Set<Connection>>();
  private readonly metrics: HubMetrics;
  private readonly fanout: FanoutSource | undefined;

  constructor(options: HubOptions) {
    this.ring = new EventRing(options.ringCapacity);
    this.index = new SubscriptionIndex(options.extractors);
    this.metrics = options.metrics;
    this.fanout = options.fanout;
  }

  get size(): number {
    return this.connections.size;
  }

  /**
   * Registers a connection and sends the welcome events; with `resumeFrom`, then the events after
   * that position that match, or `gw.resync_required` when the position is no longer held.
   */
  add(conn: Connection, subs: Subscription[], resumeFrom?: string): void {
    this.index.set(conn, subs);
    this.connections.set(conn.id, conn);
    this.joinSession(conn);
    this.metrics.connectionOpened(conn.transport, this.index.size);
    this.sendOwn(conn, connectionCreated(conn.token));
    this.sendOwn(conn, subscriptionsSet(subs));
    if (resumeFrom !== undefined) this.replay(conn, resumeFrom);
  }

  remove(conn: Connection): void {
    if (this.connections.get(conn.id) !== conn) return;
    this.connections.delete(conn.id);
    this.index.remove(conn);
    if (conn.sessionId !== undefined) {
      const set = this.sessions.get(conn.sessionId);
      set?.delete(conn);
      if (set?.size === 0) this.sessions.delete(conn.sessionId);
    }
    this.metrics.connectionClosed(conn.transport, this.index.size);
  }

  get(id: string): Connection | undefined {
    return this.connections.get(id);
  }

  /** Replaces a held connection's subscriptions; false when this replica does not hold it. */
  setSubscriptions(id: string, subs: Subscription[], sessionId?: string): boolean {
    const conn = this.connections.get(id);
    if (!conn) return false;
    this.index.set(conn, subs);
    if (sessionId !== undefined && conn.sessionId === undefined) {
      conn.sessionId = sessionId;
      this.joinSession(conn);
    }
    this.metrics.subscriptionsChanged(this.index.size);
    this.sendOwn(conn, subscriptionsSet(subs));
    return true;
  }

  /** Sends `gw.session_killed` to every connection of the session and closes them. */
  killSession(sessionId: string): number {
    const conns = [...(this.sessions.get(sessionId) ?? [])];
    for (const conn of conns) {
      this.sendOwn(conn, sessionKilled(sessionId));
      conn.close('session_killed');
      this.remove(conn);
    }
    if (conns.length) this.metrics.sessionKilled(conns.length);
    return conns.length;
  }

  /** One event from the fan-out stream: remember it, then deliver it to every matching connection. */
  dispatch(position: string, json: string): void {
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(json);
    } catch {
      this.metrics.eventDropped('not_json');
      return;
    }
    const type = event['type'];
    if (typeof type !== 'string') {
      this.metrics.eventDropped('no_type');
      return;
    }
    const single = json.includes('\n') ? JSON.stringify(event) : json;
    this.ring.push({ position, type, event, json: single });
    const out: OutgoingEvent = { type, json: single, position };
    const matchable = event as { type: string };
    const delivered =
      this.fanout !== undefined && isTracingActive()
        ? traceDelivery(this.fanout, event, () => this.deliver(matchable, out))
        : this.deliver(matchable, out);
    this.metrics.eventDispatched(type, delivered);
  }

  /** Closes every connection (shutdown); clients reconnect elsewhere and resume with their last id. */
  closeAll(): void {
    for (const conn of [...this.connections.values()]) {
      conn.close('shutdown');
      this.remove(conn);
    }
  }

  /** Sends the event to every matching connection; answers how many. */
  private deliver(event: { type: string }, out: OutgoingEvent): number {
    let delivered = 0;
    this.index.match(event, (conn) => {
      conn.send(out);
      delivered++;
    });
    return delivered;
  }

  private replay(conn: Connection, from: string): void {
    const missed = this.ring.after(from);
    if (!missed) {
      this.sendOwn(conn, resyncRequired(from));
      return;
    }
    for (const e of missed) {
      if (this.index.matches(conn, e.event as { type: string })) {
        conn.send({ type: e.type, json: e.json, position: e.position });
      }
    }
  }

  /** Gateway-made events carry the stream head as position, so a resume continues from here. */
  private sendOwn(conn: Connection, e: OutgoingEvent): void {
    conn.send({ ...e, position: this.ring.head });
  }

  private joinSession(conn: Connection): void {
    if (conn.sessionId === undefined) return;
    let set = this.sessions.get(conn.sessionId);
    if (!set) {
      set = new Set();
      this.sessions.set(conn.sessionId, set);
    }
    set.add(conn);
  }
}
