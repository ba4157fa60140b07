/**
 * Presence over HTTP:
 * - `GET /v3/presence?eventType=…&where=…&limit=…` on the internal API: the count and the
 *   connections present (connection, transport, replica, user, session, since), cluster-wide;
 * - `GET /_gw/v1/presence?eventType=…&where=…` for clients, for the types of PRESENCE_EVENT_TYPES
 *   only (403 otherwise), at most PRESENCE_QUERIES_PER_MINUTE per client address (429), allowed as
 *   subscribing to that place would be (the JWT rules and SUBSCRIPTION_CHECK, with
 *   `{"subscriptions": [the place]}`): the
 *   count and the members (their opaque id, as presence events name them, and user), never
 *   another client's session or connection. Answers are kept PRESENCE_CACHE_TTL per place on each
 *   replica, so clients that poll cost the cluster one query a place per replica and period.
 * `where` is a JSON object of the type's extractor fields (a room: `{"room": 42}`); absent, the
 * type as a whole. Bad input is a 400 naming it; our own control bus down a 503 with Retry-After.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError, Router, sendJson, sendText } from '@gatehouse/service-kit';
import {
  createSubscriberGet,
  type SubscriberGetContext,
  type SubscriberGetDeps,
  type Subscription,
} from '../subscriptions/index.ts';
import { memberOf } from './presence-member.ts';
import type { PresenceMetrics } from './presence-metrics.ts';
import { type Place, type Presence, type PresenceQuery, readPlace } from './presence-query.ts';

/** `queries`: PRESENCE_QUERIES_PER_MINUTE per client address. */
export interface PresenceApiDeps extends Omit<SubscriberGetDeps, 'path' | 'what'> {
  query: PresenceQuery;
  maxJsonDepth: number;
  /** Checks a place's constraint fields as a subscription's (the extractor configuration). */
  validate: (subs: Subscription[]) => void;
  /** PRESENCE_MAX_LISTED: connections (members for clients) listed at most. */
  maxListed: number;
  /** PRESENCE_CACHE_TTL, ms. */
  cacheTtlMs: number;
  /** Whether clients may ask about this type (PRESENCE_EVENT_TYPES). */
  hasPresence: (type: string) => boolean;
  /** The id other clients see for a member (presence-member.ts). */
  publicMember: (member: string) => string;
  metrics: PresenceMetrics;
}

export const PRESENCE_PATH = '/_gw/v1/presence';
/** Places whose answers a replica keeps at once, for clients. */
const maxCachedPlaces = 1000;

export function createPresenceApi(deps: PresenceApiDeps) {
  const cache = new Map<string, { until: number; answer: Promise<Presence> }>();

  /** One query per place and period for every client of this replica (failures are not kept). */
  function cached(place: Place): Promise<Presence> {
    const key = JSON.stringify([place.eventType, place.where?.canonical]);
    const now = Date.now();
    const hit = cache.get(key);
    if (hit && hit.until > now) return hit.answer;
    if (cache.size >= maxCachedPlaces) for (const [k, v] of cache) if (v.until <= now) cache.delete(k);
    if (cache.size >= maxCachedPlaces) cache.delete(cache.keys().next().value!);
    const answer = deps.query.of(place, deps.maxListed);
    answer.then(
      (p) => deps.metrics.queried('public', p.partial),
      () => {},
    );
    cache.set(key, { until: now + deps.cacheTtlMs, answer });
    answer.catch(() => cache.delete(key));
    return answer;
  }

  async function internal(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const query = new URL(req.url ?? '/', 'http://local').searchParams;
    const place = readPlace(query, deps.maxJsonDepth, deps.validate);
    const limitText = query.get('limit');
    const limit = limitText === null ? deps.maxListed : Number(limitText);
    if (!Number.isInteger(limit) || limit < 0 || limit > deps.maxListed)
      throw new HttpError(400, `limit: expected an integer from 0 to ${deps.maxListed}`);
    const presence = await deps.query.of(place, limit);
    deps.metrics.queried('internal', presence.partial);
    sendJson(res, 200, presence);
  }

  async function forClient(
    _req: IncomingMessage,
    res: ServerResponse,
    { query, cors, allowed }: SubscriberGetContext,
  ): Promise<void> {
    const place = readPlace(query, deps.maxJsonDepth, deps.validate);
    if (!deps.hasPresence(place.eventType))
      return sendText(res, 403, 'Presence is not enabled for this event type.', cors);
    // Whether the client may subscribe to the place: then it may see who is there.
    await allowed(place.eventType, place.where?.object);
    const presence = await cached(place);
    sendJson(res, 200, forClients(presence), cors);
  }

  /** What a client sees: members by their opaque id, never a session or connection. */
  function forClients(p: Presence) {
    const members = new Map<string, { member: string; user?: string }>();
    for (const c of p.connections) {
      const member = deps.publicMember(
        memberOf({ connectionId: c.connection, sessionId: c.session, user: c.user }),
      );
      if (!members.has(member))
        members.set(member, { member, ...(c.user !== undefined && { user: c.user }) });
    }
    return {
      eventType: p.eventType,
      ...(p.where && { where: p.where }),
      count: p.count,
      members: [...members.values()],
      complete: p.complete,
      partial: p.partial,
    };
  }

  const internalRoutes = new Router().get('/v3/presence', internal);

  return {
    /** The internal API's part (another method: 405 with Allow, as every internal route). */
    internal: (req: IncomingMessage, res: ServerResponse): Promise<boolean> =>
      internalRoutes.handle(req, res),
    /** The public edge's part. */
    public: createSubscriberGet({ ...deps, path: PRESENCE_PATH, what: 'presence' }, forClient),
  };
}
