/**
 * What replicas say to each other for the connections API, on their own control channel
 * (`gw.connections.<replica>`): the asking replica broadcasts one of these and merges the replies
 * (connections-cluster.ts); each replica answers for the connections it holds (replica-connections.ts).
 */
import type { TransportKind } from '../connections/index.ts';
import type { ConnectionDetail, ConnectionEntry } from './connection-entry.ts';
import type { ConnectionFilter } from './connection-filter.ts';
import type { ReplicaCounters } from '../metrics/index.ts';

/** Whose connections a disconnect ends: one connection, a session's, or a user's. */
export type DisconnectTarget = { id: string } | { session: string } | { user: string };

export type ConnectionsRequest =
  /** Its connections passing `filter` with an id after `after`, in id order, at most `limit` and `maxBytes`. */
  | { op: 'list'; filter: ConnectionFilter; after?: string; limit: number; maxBytes: number }
  | { op: 'get'; id: string }
  | { op: 'disconnect'; target: DisconnectTarget; reason: string; reconnect: boolean }
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
