/**
 * Who is present in a place, cluster-wide: the asking replica broadcasts the query on the presence
 * channel, every live replica answers for its own connections (replica-presence.ts), and this
 * merges the parts. Bounded as the connections API is: at the channel's time-out the answer goes
 * out with what came, `partial: true`, naming the replicas that stayed silent (a replica killed a
 * moment ago is among them until the registry forgets it, and its connections are not counted).
 */
import type { Gathered } from '@gatehouse/bus';
import { HttpError } from '@gatehouse/service-kit';
import { canonicalJson, parseSubscriptions, type Subscription } from '../subscriptions/index.ts';
import type { PresenceRequest, PresentConnection, QueryReply } from './presence-messages.ts';

export interface Place {
  eventType: string;
  /** The constraint object as given, and its canonical JSON; absent: anywhere in the type. */
  where?: { object: Record<string, unknown>; canonical: string };
}

export interface Presence {
  eventType: string;
  where?: Record<string, unknown>;
  /** Connections present, all of them. */
  count: number;
  /** The earliest of them, at most the query's limit. */
  connections: PresentConnection[];
  /** Whether `connections` lists them all. */
  complete: boolean;
  partial: boolean;
  missing: string[];
}

const maxParameterBytes = 4096;

/**
 * The place a query names: `eventType`, and `where`, a JSON object of constraint fields. Checked as
 * a subscription to it would be (`validate`: the type's extractor fields); 400 otherwise.
 */
export function readPlace(
  query: URLSearchParams,
  maxJsonDepth: number,
  validate: (subs: Subscription[]) => void,
): Place {
  const eventType = query.get('eventType') ?? '';
  if (eventType === '' || Buffer.byteLength(eventType) > 200)
    throw new HttpError(400, 'eventType: expected an event type (1 to 200 bytes)');
  const whereText = query.get('where');
  if (whereText === null) return { eventType };
  if (Buffer.byteLength(whereText) > maxParameterBytes)
    throw new HttpError(400, `where: at most ${maxParameterBytes} bytes of JSON`);
  let sub: Subscription;
  try {
    // Decoded on its own and put in a list as a value: never spliced into JSON text.
    const given: unknown = JSON.parse(whereText);
    [sub] = parseSubscriptions([{ eventType, oneOf: [given] }], maxJsonDepth) as [Subscription];
    validate([sub]);
  } catch (err) {
    throw new HttpError(400, `where: ${(err as Error).message}`);
  }
  const object = sub.oneOf[0]!;
  return { eventType, where: { object, canonical: canonicalJson(object)! } };
}

export class PresenceQuery {
  private readonly gather: (request: PresenceRequest) => Promise<Gathered>;

  constructor(gather: (request: PresenceRequest) => Promise<Gathered>) {
    this.gather = gather;
  }

  async of(place: Place, limit: number): Promise<Presence> {
    const gathered = await this.gather({
      op: 'query',
      eventType: place.eventType,
      ...(place.where && { where: place.where.canonical }),
      limit,
    });
    const replies = [...gathered.answers.values()] as QueryReply[];
    const longpoll = new Set(replies.flatMap((r) => r.longpoll));
    const count = replies.reduce((n, r) => n + r.count, 0) + longpoll.size;
    const seen = new Set<string>();
    const connections = replies
      .flatMap((r) => r.connections)
      .filter((c) => !seen.has(c.connection) && seen.add(c.connection))
      .sort((a, b) => (a.since < b.since ? -1 : a.since > b.since ? 1 : 0))
      .slice(0, limit);
    return {
      eventType: place.eventType,
      ...(place.where && { where: place.where.object }),
      count,
      connections,
      complete: connections.length === count,
      partial: gathered.missing.length > 0,
      missing: gathered.missing,
    };
  }
}
