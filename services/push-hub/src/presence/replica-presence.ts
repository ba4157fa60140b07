/**
 * One replica's part of a presence query: its connections present in a place (presence-key.ts),
 * counted all, listed up to the query's limit. SSE, WebSocket and socket.io connections come from
 * the hub's index (only those subscribed to the type are looked at); long-poll connections from
 * the ones this replica served lately, as the connections API lists them.
 */
import type { Hub } from '../delivery/index.ts';
import type { LongPollSightings } from '../transports/index.ts';
import { isPresent } from './presence-key.ts';
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
  const reply: QueryReply = { count: 0, longpoll: [], connections: [] };
  const add = (c: PresentConnection) => {
    if (c.transport === 'longpolling') reply.longpoll.push(c.connection);
    else reply.count++;
    if (reply.connections.length < limit) reply.connections.push(c);
  };
  for (const conn of hub.index.subscribersOf(eventType)) {
    const facts = hub.factsOf(conn.id);
    if (!facts || !isPresent(facts.subscriptions, eventType, where)) continue;
    add({
      connection: conn.id,
      transport: conn.transport,
      replica,
      ...(facts.user !== undefined && { user: facts.user }),
      ...(conn.sessionId !== undefined && { session: conn.sessionId }),
      since: new Date(facts.connectedAt).toISOString(),
    });
  }
  for (const { id, record, lastPollAt } of deps.sightings.all()) {
    if (!isPresent(record.subscriptions, eventType, where)) continue;
    add({
      connection: id,
      transport: 'longpolling',
      replica,
      ...(record.user !== undefined && { user: record.user }),
      ...(record.sessionId !== undefined && { session: record.sessionId }),
      since: new Date(record.connectedAt ?? lastPollAt).toISOString(),
    });
  }
  return reply;
}
