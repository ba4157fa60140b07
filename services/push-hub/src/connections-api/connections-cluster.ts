/**
 * The cluster-wide side of the connections API: whichever replica a request reaches broadcasts it
 * on the connections channel (ReplicaChannel.gather), every live replica answers for its own
 * connections (replica-connections.ts), and this merges the parts. Bounded in time: at
 * CONNECTIONS_API_TIMEOUT the answer goes out with what came, `partial: true`, and `missing` naming
 * the replicas that stayed silent. Bounded in size: each replica's part and the merged page carry
 * at most CONNECTIONS_API_MAX_BYTES of entries (and at most `limit`).
 *
 * Paging across replicas: every replica lists in connection-id order after the cursor, and says
 * whether it holds more than it sent. The page is the merged entries in id order, cut at the last id
 * of any replica that holds more (beyond it that replica's entries are unknown), so each connection
 * present from the first page to the last is on exactly one page. A long-poll connection seen by two
 * replicas is one entry: the sighting with the latest poll.
 */
import type { Gathered } from '@gatehouse/bus';
import type { ConnectionDetail, ConnectionEntry } from './connection-entry.ts';
import type { ConnectionFilter } from './connection-filter.ts';
import { encodeCursor } from './connections-cursor.ts';
import type {
  ConnectionsRequest,
  DisconnectReply,
  DisconnectTarget,
  GetReply,
  ListReply,
  ReplicaStats,
  SubscribeRefusal,
  SubscribeReply,
} from './connections-messages.ts';
import type { Subscription } from '../subscriptions/index.ts';

export interface ConnectionsClusterDeps {
  /** Broadcasts a request to the live replicas (those `ask` accepts), answering by the time-out. */
  gather(request: ConnectionsRequest, ask?: (replica: string) => boolean): Promise<Gathered>;
  maxBytes: number;
}

/** What every answer says about the replicas behind it. */
export interface Coverage {
  partial: boolean;
  /** The replicas that did not answer in time. */
  missing: string[];
}

export interface ListPage extends Coverage {
  connections: ConnectionEntry[];
  /** The cursor of the next page; absent on the last one. */
  next?: string;
}

export class ConnectionsCluster {
  private readonly deps: ConnectionsClusterDeps;

  constructor(deps: ConnectionsClusterDeps) {
    this.deps = deps;
  }

  async list(filter: ConnectionFilter, after: string | undefined, limit: number): Promise<ListPage> {
    const { maxBytes } = this.deps;
    const request: ConnectionsRequest = {
      op: 'list',
      filter,
      limit,
      maxBytes,
      ...(after !== undefined && { after }),
    };
    const only = filter.replica;
    const gathered = await this.deps.gather(request, only === undefined ? undefined : (r) => r === only);
    const parts = [...gathered.answers.values()] as ListReply[];
    return { ...pageOf(parts, limit, maxBytes), ...coverage(gathered) };
  }

  async get(id: string): Promise<Coverage & { connection?: ConnectionDetail }> {
    const gathered = await this.deps.gather({ op: 'get', id });
    const found = ([...gathered.answers.values()] as GetReply[])
      .map((r) => r.connection)
      .filter((c): c is ConnectionDetail => c !== undefined);
    const connection = latest(found);
    return { ...(connection && { connection }), ...coverage(gathered) };
  }

  async disconnect(
    target: DisconnectTarget,
    reason: string,
    reconnect: boolean,
  ): Promise<Coverage & { disconnected: number }> {
    const gathered = await this.deps.gather({ op: 'disconnect', target, reason, reconnect });
    const ids = new Set(([...gathered.answers.values()] as DisconnectReply[]).flatMap((r) => r.ids));
    return { disconnected: ids.size, ...coverage(gathered) };
  }

  /** An operator's change of the target's subscriptions, on whichever replicas hold them. */
  async subscribe(
    target: DisconnectTarget,
    manual: Subscription[],
  ): Promise<Coverage & { changed: number; refused: SubscribeRefusal[] }> {
    const gathered = await this.deps.gather({ op: 'subscribe', target, manual });
    const replies = [...gathered.answers.values()] as SubscribeReply[];
    const ids = new Set(replies.flatMap((r) => r.ids));
    const refused = replies.flatMap((r) => r.refused).filter((r) => !ids.has(r.id));
    return { changed: ids.size, refused, ...coverage(gathered) };
  }

  async replicas(): Promise<Coverage & { replicas: ReplicaStats[] }> {
    const gathered = await this.deps.gather({ op: 'stats' });
    const replicas = ([...gathered.answers.values()] as ReplicaStats[]).sort((a, b) =>
      a.replica.localeCompare(b.replica),
    );
    return { replicas, ...coverage(gathered) };
  }
}

function coverage(gathered: Gathered): Coverage {
  return { partial: gathered.missing.length > 0, missing: gathered.missing };
}

/** The merged page of the replicas' parts (see the module comment). */
export function pageOf(
  parts: ListReply[],
  limit: number,
  maxBytes: number,
): { connections: ConnectionEntry[]; next?: string } {
  // Beyond the last id of a part that holds more, that replica's entries are unknown.
  const cuts = parts.filter((p) => p.more && p.connections.length > 0).map((p) => p.connections.at(-1)!.id);
  const cut = cuts.sort()[0];
  const byId = new Map<string, ConnectionEntry>();
  for (const entry of parts.flatMap((p) => p.connections)) {
    if (cut !== undefined && entry.id > cut) continue;
    byId.set(entry.id, latest([byId.get(entry.id), entry].filter((e) => e !== undefined))!);
  }
  const merged = [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const connections: ConnectionEntry[] = [];
  let bytes = 0;
  for (const entry of merged) {
    if (connections.length === limit) break;
    bytes += Buffer.byteLength(JSON.stringify(entry));
    if (connections.length > 0 && bytes > maxBytes) break;
    connections.push(entry);
  }
  const more = connections.length < merged.length || cut !== undefined;
  return more && connections.length > 0
    ? { connections, next: encodeCursor(connections.at(-1)!.id) }
    : { connections };
}

/** Of several sightings of one connection, the one with the latest poll (or the only one). */
function latest<T extends ConnectionEntry>(entries: T[]): T | undefined {
  return entries.reduce<T | undefined>(
    (best, e) => (best === undefined || (e.lastPollAt ?? '') > (best.lastPollAt ?? '') ? e : best),
    undefined,
  );
}
