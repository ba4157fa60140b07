/**
 * Presence put together for one hub replica: its control channel (`gw.presence.<replica>`), the
 * tracker of joins and leaves, the query, and the two APIs. The salt of the members' public ids is
 * the cluster's, made once in the store by the first replica that starts.
 */
import { randomBytes } from 'node:crypto';
import type { BlockList } from 'node:net';
import { ReplicaChannel, type Bus } from '@gatehouse/bus';
import { type CloudEvent, createEvent } from '@gatehouse/cloudevents';
import { clientAddress, type CorsPolicy, type Logger, type Registry } from '@gatehouse/service-kit';
import { AddressBudget } from '../limits/index.ts';
import type { Store } from '@gatehouse/store';
import type { BearerTokens } from '../auth/index.ts';
import { presenceChanged } from '../connections/index.ts';
import type { Hub, MembershipChange } from '../delivery/index.ts';
import { lifecycleSource } from '../lifecycle/index.ts';
import type { ResolvedSubscriptions, Subscription, SubscriptionRequest } from '../subscriptions/index.ts';
import type { LongPollSightings } from '../transports/index.ts';
import { createPresenceApi } from './presence-api.ts';
import { publicMemberId, sessionOfMember } from './presence-member.ts';
import type { PresenceRequest } from './presence-messages.ts';
import { PresenceMetrics } from './presence-metrics.ts';
import { PresenceQuery } from './presence-query.ts';
import { type PresenceChange, PresenceTracker } from './presence-tracker.ts';
import { answerQuery } from './replica-presence.ts';

export interface PresenceSettings {
  PRESENCE_EVENT_TYPES: string[];
  PRESENCE_LEAVE_DELAY: number;
  PRESENCE_MAX_MEMBERS: number;
  PRESENCE_MAX_LISTED: number;
  PRESENCE_MAX_PLACES_PER_CONNECTION: number;
  PRESENCE_QUERIES_PER_MINUTE: number;
  TRUSTED_PROXIES: BlockList | undefined;
  PRESENCE_CACHE_TTL: number;
  CONNECTIONS_API_TIMEOUT: number;
}

export interface PresenceDeps {
  replica: string;
  controlBus: Bus;
  store: Store;
  logger: Logger;
  registry: Registry;
  hub: () => Hub;
  sightings: LongPollSightings;
  maxJsonDepth: number;
  bearerTokens: BearerTokens;
  resolve(req: SubscriptionRequest): ResolvedSubscriptions | Promise<ResolvedSubscriptions>;
  cors: CorsPolicy;
  /** The lifecycle events (LIFECYCLE_EVENTS_TOPIC), when on: joins and leaves go there too. */
  lifecycle?: { emitLifecycle(event: CloudEvent): void } | undefined;
}

const saltKey = 'gw:presence:salt';
const goneKey = (replica: string) => `gw:presence:gone:${replica}`;
/** At most this many types announce joins and leaves: each adds work to every subscription change. */
export const maxAnnouncedTypes = 64;

export function createPresence(config: PresenceSettings, deps: PresenceDeps) {
  if (config.PRESENCE_EVENT_TYPES.length > maxAnnouncedTypes)
    throw new Error(`PRESENCE_EVENT_TYPES: at most ${maxAnnouncedTypes} types`);
  const announced = new Set(config.PRESENCE_EVENT_TYPES);
  let salt = '';
  const channel = new ReplicaChannel({
    bus: deps.controlBus,
    replica: deps.replica,
    logger: deps.logger,
    store: deps.store,
    prefix: 'gw.presence.',
  });
  const gather = (request: PresenceRequest, ask?: (replica: string) => boolean) =>
    channel.gather(request, config.CONNECTIONS_API_TIMEOUT, ask);
  const tracker = new PresenceTracker({
    replica: deps.replica,
    announces: (type) => announced.has(type),
    leaveDelayMs: config.PRESENCE_LEAVE_DELAY,
    maxPlacesPerConnection: config.PRESENCE_MAX_PLACES_PER_CONNECTION,
    maxMembers: config.PRESENCE_MAX_MEMBERS,
    gather,
    liveReplicas: () => channel.live(),
    claimGone: (replica) =>
      deps.store.set(goneKey(replica), deps.replica, { ifAbsent: true, ttlSeconds: 600 }),
    tell,
    overflowed: () => metrics.overflowed(),
    ...(deps.lifecycle && {
      announcing: (change: PresenceChange) => deps.lifecycle!.emitLifecycle(presenceLifecycleEvent(change)),
    }),
    logger: deps.logger,
  });
  const metrics = new PresenceMetrics(deps.registry, () => tracker.size);
  const publicMember = (member: string) => publicMemberId(member, salt);

  /** What clients are told of a change: the member by its public id only. */
  function dataOf(change: PresenceChange) {
    return {
      eventType: change.eventType,
      where: JSON.parse(change.where) as Record<string, unknown>,
      member: publicMember(change.member),
      ...(change.user !== undefined && { user: change.user }),
    };
  }

  /**
   * The same change on the lifecycle topic, for backends: with the replica, and the session when the
   * member is one (the bus is the operator's, as the connection events' session is).
   */
  function presenceLifecycleEvent(change: PresenceChange): CloudEvent {
    return createEvent({
      specversion: '1.0',
      type: `gw.presence.${change.kind}`,
      source: lifecycleSource(deps.replica),
      contentType: 'application/json',
      data: {
        ...dataOf(change),
        replica: deps.replica,
        sessionId: sessionOfMember(change.member) ?? null,
      },
    });
  }

  function tell(change: PresenceChange): void {
    const data = dataOf(change);
    const type = `gw.presence.${change.kind}`;
    deps.hub().deliverOwn({ type, data } as { type: string }, presenceChanged(change.kind, data));
    metrics.told(change.kind);
  }

  const api = createPresenceApi({
    query: new PresenceQuery((request) => gather(request)),
    maxJsonDepth: deps.maxJsonDepth,
    validate: (subs: Subscription[]) => deps.hub().index.check(subs),
    maxListed: config.PRESENCE_MAX_LISTED,
    cacheTtlMs: config.PRESENCE_CACHE_TTL,
    hasPresence: (type: string) => announced.has(type),
    queries: new AddressBudget({ perMinute: config.PRESENCE_QUERIES_PER_MINUTE }),
    addressOf: (req) => clientAddress(req, config.TRUSTED_PROXIES),
    publicMember,
    bearerTokens: deps.bearerTokens,
    resolve: deps.resolve,
    cors: deps.cors,
    metrics,
  });

  return {
    ...api,
    /** For the hub: every change of a held connection's subscriptions. */
    membership(change: MembershipChange): void {
      tracker.changed(
        { connectionId: change.connectionId, sessionId: change.sessionId, user: change.user },
        change.before,
        change.after,
      );
    },
    async start(): Promise<void> {
      await deps.store.set(saltKey, randomBytes(32).toString('base64url'), { ifAbsent: true });
      salt = (await deps.store.get(saltKey)) ?? '';
      await channel.start((body) => {
        const request = body as PresenceRequest;
        if (request.op !== 'query') return tracker.answer(request);
        return answerQuery(
          { replica: deps.replica, hub: deps.hub(), sightings: deps.sightings },
          request.eventType,
          request.where,
          request.limit,
        );
      });
      await tracker.start();
    },
    async stop(): Promise<void> {
      tracker.stop();
      await channel.close();
    },
  };
}
