/**
 * One replica's part of a presence query: its connections present in a place (presence-key.ts),
 * counted all, listed up to the query's limit. SSE, WebSocket and socket.io connections come from
 * the hub's index (only those subscribed to the type are looked at); long-poll connections from
 * the ones this replica served lately, as the connections API lists them.
 */
import type { Hub } from '../delivery/index.ts';
import type { LongPollSightings } from '../transports/index.ts';
import { presenceTest } from './presence-key.ts';
import type { PresentConnection, QueryReply } from './presence-messages.ts';

export interface ReplicaPresenceDeps {
  replica: string;
  hub: Hub;
  sightings: LongPollSightings;
}

export function answerQuery(
  deps: ReplicaPresenceDeps,
  eventType: string,
  where: string | undefined,
  limit: number,
): QueryReply {
  const { hub, replica } = deps;
  const present = presenceTest(eventType, where);
  const reply: QueryReply = { count: 0, longpoll: [], connections: [] };
  // The entry is made only for the connections listed: a count of 100,000 makes 100,000 otherwise.
  const found = (transport: string, connection: string, make: () => PresentConnection) => {
    if (transport === 'longpolling') reply.longpoll.push(connection);
    else reply.count++;
    if (reply.connections.length < limit) reply.connections.push(make());
  };
  for (const conn of hub.index.subscribersOf(eventType)) {
    const facts = hub.factsOf(conn.id);
    if (!facts || !present(facts.subscriptions)) continue;
    found(conn.transport, conn.id, () => ({
      connection: conn.id,
      transport: conn.transport,
      replica,
      ...(facts.user !== undefined && { user: facts.user }),
      ...(conn.sessionId !== undefined && { session: conn.sessionId }),
      since: new Date(facts.connectedAt).toISOString(),
    }));
  }
  for (const { id, record, lastPollAt } of deps.sightings.all()) {
    if (!present(record.subscriptions)) continue;
    found('longpolling', id, () => ({
      connection: id,
      transport: 'longpolling',
      replica,
      ...(record.user !== undefined && { user: record.user }),
      ...(record.sessionId !== undefined && { session: record.sessionId }),
      since: new Date(record.connectedAt ?? lastPollAt).toISOString(),
    }));
  }
  return reply;
}
