/**
 * One replica's part of the connections API: it answers the requests other replicas (and itself)
 * broadcast (connections-messages.ts) for the connections it holds: SSE, WebSocket and socket.io
 * connections from the hub, long-poll connections from the ones it served lately
 * (longpoll-sightings.ts). A list is in connection-id order from a cursor, at most `limit` entries
 * and `maxBytes` of them (at least one, so paging always moves on).
 */
import { TRANSPORTS, type TransportKind } from '../connections/index.ts';
import { type ConnectionDetail, type ConnectionEntry, isoTime } from './connection-entry.ts';
import { type ConnectionFilter, type Filterable, passes } from './connection-filter.ts';
import type {
  ConnectionsRequest,
  DisconnectReply,
  DisconnectTarget,
  GetReply,
  ListReply,
  ReplicaStats,
  SubscribeReply,
} from './connections-messages.ts';
import type { Hub } from '../delivery/index.ts';
import type { HubMetrics } from '../metrics/index.ts';
import type { OperatorChange } from '../subscription-changes/index.ts';
import { type Subscription, SubscriptionRequestError } from '../subscriptions/index.ts';
import type { LongPollSighting, LongPollSightings } from '../transports/index.ts';

export interface ReplicaConnectionsDeps {
  replica: string;
  hub: Hub;
  sightings: LongPollSightings;
  /** Ends a long-poll connection (queues `gw.connection_closed` for it); false when it is gone. */
  disconnectLongPoll(id: string, reason: string, reconnect: boolean): Promise<boolean>;
  /** JWT-inferred ∪ the operator's list, bounded (operator-change.ts). */
  merge: OperatorChange['merge'];
  /**
   * Gives a long-poll connection its JWT-inferred subscriptions ∪ `manual` (in its record, with
   * `gw.subscriptions_set` queued); false when it is gone. Throws as `merge` does.
   */
  subscribeLongPoll(id: string, manual: Subscription[]): Promise<boolean>;
  metrics: HubMetrics;
}

/** A connection this replica can show: filterable at once, made into an entry only when sent. */
interface Held extends Filterable {
  id: string;
  entry(): ConnectionEntry;
}

export class ReplicaConnections {
  private readonly deps: ReplicaConnectionsDeps;

  constructor(deps: ReplicaConnectionsDeps) {
    this.deps = deps;
  }

  /** Answers one request of the connections channel. */
  answer(request: ConnectionsRequest): Promise<unknown> | unknown {
    switch (request.op) {
      case 'list':
        return this.list(request.filter, request.after, request.limit, request.maxBytes);
      case 'get':
        return this.get(request.id);
      case 'disconnect':
        return this.disconnect(request.target, request.reason, request.reconnect);
      case 'subscribe':
        return this.subscribe(request.target, request.manual);
      case 'stats':
        return this.stats();
    }
  }

  list(filter: ConnectionFilter, after: string | undefined, limit: number, maxBytes: number): ListReply {
    if (filter.replica !== undefined && filter.replica !== this.deps.replica)
      return { connections: [], more: false };
    const wanted = this.held()
      .filter((c) => (after === undefined || c.id > after) && passes(filter, c))
      .sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
    const connections: ConnectionEntry[] = [];
    let bytes = 0;
    for (const c of wanted) {
      if (connections.length === limit) break;
      const entry = c.entry();
      bytes += Buffer.byteLength(JSON.stringify(entry));
      if (connections.length > 0 && bytes > maxBytes) break;
      connections.push(entry);
    }
    return { connections, more: connections.length < wanted.length };
  }

  get(id: string): GetReply {
    const conn = this.deps.hub.get(id);
    const facts = this.deps.hub.factsOf(id);
    if (conn && facts) {
      const connection: ConnectionDetail = {
        ...this.fromHub(id, conn.transport, conn.sessionId).entry(),
        bytesQueued: conn.queuedBytes(),
        eventsWritten: conn.eventsWritten,
        behind: this.deps.hub.isBehind(conn),
      };
      return { connection };
    }
    const seen = this.deps.sightings.get(id);
    return seen ? { connection: this.fromSighting(seen).entry() } : {};
  }

  async disconnect(target: DisconnectTarget, reason: string, reconnect: boolean): Promise<DisconnectReply> {
    const { hub } = this.deps;
    const ended: string[] = [];
    for (const c of this.held().filter((c) => targets(target, c))) {
      const conn = hub.get(c.id);
      const closed = conn
        ? hub.disconnect(conn, reason, reconnect)
        : await this.deps.disconnectLongPoll(c.id, reason, reconnect);
      if (closed) ended.push(c.id);
    }
    this.deps.metrics.connectionsDisconnected(byOf(target), reconnect, ended.length);
    return { ids: ended };
  }

  /** An operator's change: each target connection gets its JWT-inferred subscriptions ∪ `manual`. */
  async subscribe(target: DisconnectTarget, manual: Subscription[]): Promise<SubscribeReply> {
    const { hub } = this.deps;
    const reply: SubscribeReply = { ids: [], refused: [] };
    for (const c of this.held().filter((c) => targets(target, c))) {
      try {
        const changed = hub.get(c.id)
          ? hub.setSubscriptions(c.id, this.deps.merge(hub.factsOf(c.id)?.jwtSubscriptions ?? [], manual))
          : await this.deps.subscribeLongPoll(c.id, manual);
        if (changed) reply.ids.push(c.id);
      } catch (err) {
        if (!(err instanceof SubscriptionRequestError)) throw err;
        reply.refused.push({ id: c.id, error: err.message });
      }
    }
    return reply;
  }

  stats(): ReplicaStats {
    const connections = Object.fromEntries(TRANSPORTS.map((t) => [t, 0])) as Record<TransportKind, number>;
    for (const conn of this.deps.hub.held()) connections[conn.transport]++;
    connections.longpolling += this.deps.sightings.all().length;
    const { metrics, hub } = this.deps;
    const position = hub.ring.head;
    return {
      replica: this.deps.replica,
      connections,
      connectionsBehind: hub.behind,
      deliveriesPerSecond: Math.round(metrics.deliveryRate.perSecond() * 100) / 100,
      fanout: {
        ...(position !== undefined && { position }),
        ...(metrics.lastEventAt !== undefined && { lastEventAt: isoTime(metrics.lastEventAt) }),
        ...(metrics.lastDelaySeconds !== undefined && {
          lagSeconds: Math.round(metrics.lastDelaySeconds * 1000) / 1000,
        }),
      },
      counters: metrics.tally.snapshot(),
    };
  }

  /** Every connection this replica can show now. */
  private held(): Held[] {
    const fromHub = this.deps.hub.held().map((c) => this.fromHub(c.id, c.transport, c.sessionId));
    return [...fromHub, ...this.deps.sightings.all().map((s) => this.fromSighting(s))];
  }

  private fromHub(id: string, transport: TransportKind, session: string | undefined): Held {
    const facts = this.deps.hub.factsOf(id);
    const replica = this.deps.replica;
    return {
      id,
      transport,
      session,
      user: facts?.user,
      subscriptions: facts?.subscriptions ?? [],
      entry: () => ({
        id,
        transport,
        replica,
        ...(session !== undefined && { session }),
        ...(facts?.user !== undefined && { user: facts.user }),
        ...(facts?.remoteAddress !== undefined && { remoteAddress: facts.remoteAddress }),
        connectedAt: isoTime(facts?.connectedAt ?? Date.now()),
        ...(facts?.expiresAt !== undefined && { expiresAt: isoTime(facts.expiresAt) }),
        subscriptions: facts?.subscriptions ?? [],
      }),
    };
  }

  private fromSighting(s: LongPollSighting): Held {
    const { record } = s;
    const replica = this.deps.replica;
    return {
      id: s.id,
      transport: 'longpolling',
      session: record.sessionId,
      user: record.user,
      subscriptions: record.subscriptions,
      entry: () => ({
        id: s.id,
        transport: 'longpolling',
        replica,
        ...(record.sessionId !== undefined && { session: record.sessionId }),
        ...(record.user !== undefined && { user: record.user }),
        ...(s.remoteAddress !== undefined && { remoteAddress: s.remoteAddress }),
        connectedAt: isoTime(record.connectedAt ?? s.lastPollAt),
        ...(record.expiresAt !== undefined && { expiresAt: isoTime(record.expiresAt) }),
        subscriptions: record.subscriptions,
        lastPollAt: isoTime(s.lastPollAt),
      }),
    };
  }
}

function targets(target: DisconnectTarget, c: Held): boolean {
  if ('id' in target) return c.id === target.id;
  if ('session' in target) return c.session === target.session;
  return c.user === target.user;
}

function byOf(target: DisconnectTarget): 'id' | 'session' | 'user' {
  return 'id' in target ? 'id' : 'session' in target ? 'session' : 'user';
}
