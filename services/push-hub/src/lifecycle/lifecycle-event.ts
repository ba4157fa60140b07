/**
 * The lifecycle events a hub replica produces to LIFECYCLE_EVENTS_TOPIC: what users otherwise build
 * by scraping logs (who connected, who left and why, whose subscriptions changed). CloudEvents 1.0,
 * `source` naming the replica, the user and session as data fields. The data is bounded: the
 * subscriptions appear as their count and their distinct event types, at most MAX_EVENT_TYPES of
 * them (a subscription list itself may take MAX_SUBSCRIPTIONS_BYTES), so an event stays small.
 */
import { type CloudEvent, createEvent } from '@gatehouse/cloudevents';
import type { TransportKind } from '../connections/index.ts';
import type { Subscription } from '../subscriptions/index.ts';

export const CONNECTION_OPENED = 'gw.connection.opened';
export const CONNECTION_CLOSED = 'gw.connection.closed';
export const SUBSCRIPTIONS_CHANGED = 'gw.subscriptions.changed';
export const REPLICA_GONE = 'gw.replica.gone';

/** Distinct event types an event lists at most (`eventTypesTruncated` says when there were more). */
export const MAX_EVENT_TYPES = 32;

/**
 * Why a connection ended. The hub's own close reasons (connection.ts: `shutdown` is the drain of a
 * stopping replica, `disconnected` / `reconnect_advised` an operator's disconnect, `session_killed`
 * the blacklist, `session_expired` the JWT's expiry) and what the transports see: the client went
 * away, stopped answering pings or polling (`idle_timeout`), broke the protocol, or the socket failed.
 */
export type EndReason =
  | 'client_closed'
  | 'shutdown'
  | 'session_killed'
  | 'session_expired'
  | 'slow_consumer'
  | 'unavailable'
  | 'disconnected'
  | 'reconnect_advised'
  | 'idle_timeout'
  | 'protocol_error'
  | 'error';

/** Who changed a connection's subscriptions: its client (a PUT, with or without a renewed JWT) or an operator. */
export type ChangeCause = 'client' | 'operator';

/** What every lifecycle event says of its connection. */
export interface ConnectionSnapshot {
  id: string;
  transport: TransportKind;
  user?: string | undefined;
  sessionId?: string | undefined;
  subscriptions: readonly Subscription[];
  /** When it was opened (ms since the epoch). */
  connectedAt?: number | undefined;
}

/** The `source` of a replica's lifecycle events. */
export function lifecycleSource(replica: string): string {
  return `/gw/push-hub/${encodeURIComponent(replica)}`;
}

export function connectionOpened(replica: string, conn: ConnectionSnapshot): CloudEvent {
  return lifecycleEvent(CONNECTION_OPENED, replica, conn, {});
}

export function connectionEnded(replica: string, conn: ConnectionSnapshot, reason: EndReason): CloudEvent {
  const lasted =
    conn.connectedAt === undefined ? {} : { durationMs: Math.max(0, Date.now() - conn.connectedAt) };
  return lifecycleEvent(CONNECTION_CLOSED, replica, conn, { reason, ...lasted });
}

export function subscriptionsChangedEvent(
  replica: string,
  conn: ConnectionSnapshot,
  cause: ChangeCause,
): CloudEvent {
  return lifecycleEvent(SUBSCRIPTIONS_CHANGED, replica, conn, { cause });
}

/** `replica` died without stopping, as `by` (a live replica) found: its connections have all ended. */
export function replicaGoneEvent(by: string, replica: string): CloudEvent {
  return createEvent({
    specversion: '1.0',
    type: REPLICA_GONE,
    source: lifecycleSource(by),
    contentType: 'application/json',
    extensions: { subject: replica, partitionkey: replica },
    data: { replica, reason: 'died', foundBy: by },
  });
}

function lifecycleEvent(
  type: string,
  replica: string,
  conn: ConnectionSnapshot,
  extra: Record<string, unknown>,
): CloudEvent {
  const types = [...new Set(conn.subscriptions.map((s) => s.eventType))];
  return createEvent({
    specversion: '1.0',
    type,
    source: lifecycleSource(replica),
    contentType: 'application/json',
    // A connection's events share a key: they reach a consumer in order (one partition / shard).
    extensions: { subject: conn.id, partitionkey: conn.id },
    data: {
      connectionId: conn.id,
      transport: conn.transport,
      replica,
      user: conn.user ?? null,
      sessionId: conn.sessionId ?? null,
      subscriptionCount: conn.subscriptions.length,
      eventTypes: types.slice(0, MAX_EVENT_TYPES),
      ...(types.length > MAX_EVENT_TYPES && { eventTypesTruncated: true }),
      ...(conn.connectedAt !== undefined && { connectedAt: new Date(conn.connectedAt).toISOString() }),
      ...extra,
    },
  });
}
