/**
 * What replicas say to each other for the connections API, on their own control channel
 * (`gw.connections.<replica>`): the asking replica broadcasts one of these and merges the replies
 * (connections-cluster.ts); each replica answers for the connections it holds (replica-connections.ts).
 */
import type { TransportKind } from '../connections/index.ts';
import type { ConnectionDetail, ConnectionEntry } from './connection-entry.ts';
import type { ConnectionFilter } from './connection-filter.ts';
import type { ReplicaCounters } from '../metrics/index.ts';
import type { Subscription } from '../subscriptions/index.ts';

/** Whose connections a disconnect ends (or an operator's change is for): one, a session's, a user's. */
export type DisconnectTarget = { id: string } | { session: string } | { user: string };

export type ConnectionsRequest =
  /** Its connections passing `filter` with an id after `after`, in id order, at most `limit` and `maxBytes`. */
  | { op: 'list'; filter: ConnectionFilter; after?: string; limit: number; maxBytes: number }
  | { op: 'get'; id: string }
  | { op: 'disconnect'; target: DisconnectTarget; reason: string; reconnect: boolean }
  /** Replace the manual part of its target connections' subscriptions (operator-change.ts). */
  | { op: 'subscribe'; target: DisconnectTarget; manual: Subscription[] }
  | { op: 'stats' };

export interface ListReply {
  connections: ConnectionEntry[];
  /** It holds more after the last one sent. */
  more: boolean;
}

export interface GetReply {
  connection?: ConnectionDetail;
}

export interface DisconnectReply {
  /** The ids it ended (a long-poll connection may be ended by two replicas: counted once). */
  ids: string[];
}

export interface SubscribeReply {
  /** The ids it changed (a long-poll connection may be changed by two replicas: counted once). */
  ids: string[];
  /** Those it left as they were, each with the 400 text why (JWT-inferred ∪ manual over a bound). */
  refused: SubscribeRefusal[];
}

export interface SubscribeRefusal {
  id: string;
  error: string;
}

/** `GET /v3/replicas`: one replica's numbers. */
export interface ReplicaStats {
  replica: string;
  /** Connections it holds by transport; long-polling: those it answered within the session TTL. */
  connections: Record<TransportKind, number>;
  /** Connections written at their own place (resuming, or slower than events come). */
  connectionsBehind: number;
  /** Events written to connections per second, over the last minute. */
  deliveriesPerSecond: number;
  /**
   * Its place in the fan-out stream: the position of the newest event it took, when, and its lag
   * behind the broker then (publish → written; absent on buses without the publish stamp).
   */
  fanout: { position?: string; lastEventAt?: string; lagSeconds?: number };
  /** Running totals since it started, for the console's rates and latency histogram. */
  counters: ReplicaCounters;
}
