/**
 * The push-hub service: frontend connections over SSE, WebSocket, socket.io and long-polling on
 * the public edge; delivery of every event of the fan-out stream to the matching connections this
 * replica holds; subscription changes routed to the replica holding the connection; session kills
 * from the blacklist store (looked up again after the store watch was cut off, kill-rescan.ts). On
 * shutdown it moves its clients away in batches over part of the drain window (connection-drain.ts).
 * On the internal API, the connections API (connections-api.ts) over a control channel of its own,
 * and the operator console at /dashboard (console-files.ts, test-event.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Auth, blacklistKey, blacklistPrefix, createAccessCheck } from '@gatehouse/auth';
import { type Bus, type Subscription as BusSubscription, ReplicaChannel } from '@gatehouse/bus';
import {
  clientAddress,
  type ConfigOf,
  counter,
  defaultMaxHeaderValueLength,
  defaultMaxJsonDepth,
  type GatewayService,
  type Health,
  type Logger,
  openFilesLimit,
  type Registry,
  type RequestHandler,
  startUpSteps,
} from '@gatehouse/service-kit';
import type { Store } from '@gatehouse/store';
import { bearerTokens, connectionTokensFrom, hubAuthFrom } from './auth/index.ts';
import type { pushHubConfig } from './config.ts';
import {
  AddressBudget,
  ConnectionPlaces,
  createConnectionRateLimit,
  openFilesShortfall,
  openFilesWarning,
} from './limits/index.ts';
import {
  BrokerReadSlots,
  consumeFanout,
  drainConnections,
  EventRing,
  FanoutInterest,
  Hub,
  LatestValues,
  StreamReplay,
} from './delivery/index.ts';
import {
  connectHookFrom,
  createConnectionGate,
  createReconnectCheck,
  createStreamAhead,
  handshakeRefusal,
  keepGranted,
  takePlace,
} from './admission/index.ts';
import { blacklistCounter, KillRescan } from './blacklist/index.ts';
import {
  ConnectionsCluster,
  type ConnectionsRequest,
  createConnectionsApi,
  ReplicaConnections,
} from './connections-api/index.ts';
import {
  checkTypesClaimMode,
  createSubscriptionResolver,
  SharedSubscriptionLists,
  loadExtractorConfig,
  PatternBudget,
  type Subscription,
  SubscriptionRequestError,
} from './subscriptions/index.ts';
import { createConsoleFiles, createDashboard, createTestEvent } from './console/index.ts';
import { HubMetrics } from './metrics/index.ts';
import { createPresence, withPresenceExtractors } from './presence/index.ts';
import { createHistoryApi, createOperatorHistory } from './history/index.ts';
import {
  AckMetrics,
  AckPositions,
  AckWatch,
  ackStreamOf,
  createAckEndpoint,
  createAckStart,
  LongPollAcks,
} from './acks/index.ts';
import { createLifecycleEvents, type LifecycleEvents } from './lifecycle/index.ts';

import {
  createOperatorChange,
  createSubscriptionChangeLimit,
  createSubscriptionsEndpoint,
  type SubscriptionChange,
} from './subscription-changes/index.ts';
import {
  createLongPollTransport,
  createSocketIoTransport,
  createSseTransport,
  createWsTransport,
  type LongPollRecord,
  type TransportContext,
} from './transports/index.ts';

/**
 * How long an ack of a position this replica has not read waits for it with interest routing: the
 * subscription's read-through position moves once a second (NATS), so the usual 1 s can miss it.
 */
const INTEREST_ROUTED_AHEAD_WAIT_MS = 2500;

/**
 * How long a resume position past this replica's newest event may wait for it: as reconnect
 * evidence (admission/stream-ahead.ts) and, once admitted, before it counts as unknown (hub.ts). A
 * client moved from a replica that reads ahead of this one carries such a position.
 */
const RESUME_AHEAD_GRACE_MS = 5000;

/**
 * How long a replica remembers a kill it heard (blacklist/recent-kills.ts): SESSION_KILL_MEMORY,
 * and never less than the longest an admission can take (its waits and checks, and 10 s for the
 * store's round trips), whatever it is set to.
 */
function killMemoryMs(config: ConfigOf<typeof pushHubConfig>): number {
  const admission =
    RESUME_AHEAD_GRACE_MS + config.SUBSCRIPTION_CHECK_TIMEOUT + config.CONNECT_CHECK_TIMEOUT + 10_000;
  return Math.max(config.SESSION_KILL_MEMORY, admission);
}

export interface PushHubDeps {
  fanoutBus: Bus;
  /** Carries requests between replicas (Redis in production). */
  controlBus: Bus;
  store: Store;
  auth: Auth;
  /** This replica's id, carried in its connection tokens (unique per process). */
  replica: string;
  logger: Logger;
  registry: Registry;
  health: Health;
  /** SHUTDOWN_DRAIN_TIMEOUT_MS: DRAIN_SPREAD_PERCENT of it is spent moving clients away (default 10 s). */
  drainTimeoutMs?: number;
  /** MAX_JSON_DEPTH: the deepest subscription list a client may send. */
  maxJsonDepth?: number;
  /** MAX_HEADER_VALUE_LENGTH: an ack's body `token` is bounded as a header value is. */
  maxHeaderValueLength?: number;
  /** The bus of LIFECYCLE_EVENTS_TOPIC (LIFECYCLE_EVENTS_BUS); default: the fan-out bus (one process). */
  lifecycleBus?: Bus;
}

/** `lifecycle`: undefined unless LIFECYCLE_EVENTS_TOPIC is set; its emitLifecycle takes any event. */
export type PushHub = GatewayService & { readonly hub: Hub; readonly lifecycle: LifecycleEvents | undefined };

/** LONGPOLL_SESSION_TTL, at least twice LONGPOLL_TIMEOUT: a waiting poll must not outlive its session. */
function longPollSessionTtlSeconds(config: ConfigOf<typeof pushHubConfig>): number {
  return Math.ceil(Math.max(config.LONGPOLL_SESSION_TTL, 2 * config.LONGPOLL_TIMEOUT) / 1000);
}

/** Messages each replica's connections-API stream keeps, about (Redis MAXLEN ~): its answers are large. */
const CONNECTIONS_STREAM_LENGTH = 100;

export function createPushHub(config: ConfigOf<typeof pushHubConfig>, deps: PushHubDeps): PushHub {
  const logger = deps.logger.child({ service: 'push-hub' });
  const shortfall = openFilesShortfall(config.MAX_CONNECTIONS, openFilesLimit());
  if (shortfall)
    logger.warn({ ...shortfall, maxConnections: config.MAX_CONNECTIONS }, openFilesWarning(shortfall));
  const metrics = new HubMetrics(deps.registry, config.METRICS_MAX_EVENT_TYPES);
  const auth = hubAuthFrom(deps.auth);
  checkTypesClaimMode(config.SUBSCRIPTION_TYPES_CLAIM, config.SUBSCRIPTION_CHECK);
  const tokens = connectionTokensFrom(deps.auth, deps.replica, config.CONNECTION_TOKEN_TTL);
  const extractors = withPresenceExtractors(
    loadExtractorConfig(config.EXTRACTORS),
    config.PRESENCE_EVENT_TYPES,
  );
  const ring = new EventRing(config.EVENT_BUFFER_SIZE, config.EVENT_BUFFER_MAX_BYTES);
  const lifecycle = createLifecycleEvents(config, {
    bus: deps.lifecycleBus ?? deps.fanoutBus,
    replica: deps.replica,
    registry: deps.registry,
    logger,
  });
  let fanout: BusSubscription | undefined;
  const replay = deps.fanoutBus.capabilities.replay
    ? new StreamReplay({
        bus: deps.fanoutBus,
        topic: config.FANOUT_TOPIC,
        ring,
        // A replica that went live on an empty stream dispatches every event after its origin.
        liveAfter: () => fanout?.liveAfter ?? fanout?.origin,
        maxReaders: config.RESUME_REPLAY_READERS,
        metrics,
        onError: (err) => logger.warn({ err }, 'fan-out replay error'),
      })
    : undefined;
  const interest = interestRouting(config, deps.fanoutBus, metrics, logger);
  // History and rewinds further back than the event buffer read the newest of the stream.
  const brokerTail = deps.fanoutBus.capabilities.tail
    ? {
        bus: deps.fanoutBus,
        topic: config.FANOUT_TOPIC,
        scan: config.HISTORY_BROKER_SCAN,
        timeoutMs: config.HISTORY_BROKER_TIMEOUT,
        slots: new BrokerReadSlots(config.HISTORY_BROKER_READS),
      }
    : undefined;
  const latestOverflow = counter(deps.registry, {
    name: 'gw_latest_keys_overflow_total',
    help: 'Latest values not kept: this replica wrote LATEST_MAX_KEYS keys already',
  });
  const latest =
    config.LATEST_EVENT_TYPES.length === 0
      ? undefined
      : new LatestValues(
          {
            types: new Set(config.LATEST_EVENT_TYPES),
            maxEventBytes: config.LATEST_MAX_EVENT_BYTES,
            maxKeys: config.LATEST_MAX_KEYS,
            ttlSeconds: Math.ceil(config.LATEST_TTL / 1000),
          },
          {
            store: deps.store,
            extractors,
            compare: (a, b) => deps.fanoutBus.comparePositions(a, b),
            onError: onceEvery(10_000, (err, missed) =>
              logger.warn({ err, missed }, 'latest value not kept (store unavailable?)'),
            ),
            overflowed: () => latestOverflow.inc(),
          },
        );
  const hub = new Hub({
    latest,
    warmedUp: config.EVENT_BUFFER_WARMUP && !interest && deps.fanoutBus.capabilities.tail,
    maxRewind: config.HISTORY_MAX_LIMIT,
    aheadGraceMs: RESUME_AHEAD_GRACE_MS,
    rewindTail: brokerTail,
    extractors,
    ring,
    replay,
    interest,
    patternLimits: {
      maxSegments: config.MAX_PATTERN_SEGMENTS,
      budget: new PatternBudget(config.MAX_TYPE_PATTERNS, config.MAX_TYPE_PATTERNS_PER_ADDRESS),
    },
    metrics,
    maxUnreadBytes: config.MAX_BUFFERED_BYTES,
    fanout: { system: deps.fanoutBus.kind, topic: config.FANOUT_TOPIC },
    membership: (change) => presence.membership(change),
    lifecycle,
    killMemory: { keepMs: killMemoryMs(config), maxSessions: config.SESSION_KILL_MEMORY_MAX_SESSIONS },
    lookUpKill: (sessionId) => lookUpKill(sessionId),
  });
  const check = createAccessCheck(config.SUBSCRIPTION_CHECK, {
    verify: (jwt) => deps.auth.verifyAndCheck(jwt),
    timeoutMs: config.SUBSCRIPTION_CHECK_TIMEOUT,
    onProblem: (p) => logger.warn(p, 'subscription check failed; denying'),
  });
  const bounds = {
    maxCount: config.MAX_SUBSCRIPTIONS_PER_CONNECTION,
    maxBytes: config.MAX_SUBSCRIPTIONS_BYTES,
    maxPatterns: config.MAX_PATTERNS_PER_CONNECTION,
  };
  const resolve = createSubscriptionResolver({
    auth,
    onJwtRefused: (reason) => logger.info({ reason }, 'JWT refused'),
    extractors,
    validate: (subs, address) => hub.index.validate(subs, address),
    check,
    maxJsonDepth: deps.maxJsonDepth ?? defaultMaxJsonDepth,
    bounds,
    typesClaim: config.SUBSCRIPTION_TYPES_CLAIM,
    patternsUnchecked: config.SUBSCRIPTION_CHECK instanceof URL && !config.SUBSCRIPTION_CHECK_PATTERNS,
    shared: new SharedSubscriptionLists({
      maxLists: config.SHARED_SUBSCRIPTION_LISTS,
      maxTextBytes: config.SHARED_SUBSCRIPTION_LIST_BYTES,
    }),
  });
  const operatorChange = createOperatorChange(resolve, bounds);
  const addressBudget = new AddressBudget({ perMinute: config.MAX_CONNECTIONS_PER_IP_PER_MINUTE });
  const rateLimit = createConnectionRateLimit(deps.store, {
    maxPerMinute: config.MAX_CONNECTIONS_PER_MINUTE,
    maxReconnectsPerMinute: config.MAX_RECONNECTS_PER_MINUTE,
  });
  const ackMetrics = new AckMetrics(deps.registry);
  const ackPositions = new AckPositions({
    store: deps.store,
    stream: ackStreamOf({ bus: deps.fanoutBus, place: () => ring.place, subscription: () => fanout }),
    // The read-through position of an interest-routed subscription is probed each second.
    ...(config.FANOUT_ROUTING === 'interest' && { aheadWaitMs: INTEREST_ROUTED_AHEAD_WAIT_MS }),
    ttlSeconds: Math.ceil(config.ACK_SESSION_TTL / 1000),
    maxSessionsPerSubject: config.ACK_MAX_SESSIONS_PER_SUBJECT,
  });
  const ackWatch = new AckWatch({
    positions: ackPositions,
    holds: (conn) => hub.get(conn.id) === conn,
    disconnect: (conn, reason, reconnect) => hub.disconnect(conn, reason, reconnect),
    timeoutMs: config.ACK_TIMEOUT,
    metrics: ackMetrics,
    onError: onceEvery(10_000, (err, missed) =>
      logger.warn({ err, missed }, 'acknowledged position not read (store unavailable?)'),
    ),
  });
  const gate = createConnectionGate({
    ackStart: createAckStart(ackPositions, config.ACK_TIMEOUT),
    addressBudget,
    trustedProxies: config.TRUSTED_PROXIES,
    resolve,
    rateLimit,
    isReconnect: createReconnectCheck({
      tokens,
      holds: (p) => ring.has(p),
      // With interest routing the ring holds only the types read here: a position of another type
      // would wait for nothing.
      ahead: interest
        ? undefined
        : createStreamAhead({
            head: () => ring.head,
            compare: (a, b) => deps.fanoutBus.comparePositions(a, b),
            epochOf: (p) => deps.fanoutBus.positionEpoch?.(p),
            maxWaitMs: RESUME_AHEAD_GRACE_MS,
            maxWaiting: config.RESUME_AHEAD_MAX_WAITING,
          }),
    }),
    metrics,
    connectHook: connectHookFrom(config, {
      registry: deps.registry,
      logger,
      bounds,
      maxJsonDepth: deps.maxJsonDepth ?? defaultMaxJsonDepth,
      validate: (subs) => hub.index.validate(subs),
    }),
  });
  const places = new ConnectionPlaces({
    perAddress: config.MAX_CONNECTIONS_PER_ADDRESS,
    perReplica: config.MAX_CONNECTIONS,
  });
  const ctx: TransportContext = {
    hub,
    gate,
    places,
    takePlace: (transport, owner, req) =>
      takePlace({ places, trustedProxies: config.TRUSTED_PROXIES, metrics }, transport, owner, req),
    tokens,
    bearerTokens,
    logger,
    cors: config.CORS_ALLOWED_ORIGINS,
    heartbeatMs: config.HEARTBEAT_INTERVAL,
    writeHighWater: config.CONNECTION_HIGH_WATER_BYTES,
    reconnectDelayMs: () => Math.round(Math.random() * config.DRAIN_RECONNECT_JITTER),
    addressOf: (req) => clientAddress(req, config.TRUSTED_PROXIES),
    acks: ackWatch,
  };
  const sse = createSseTransport(ctx);
  const ws = createWsTransport(ctx, config.WS_MAX_PAYLOAD_BYTES);
  const socketio = createSocketIoTransport(ctx, {
    maxPacketBytes: config.SOCKETIO_MAX_PACKET_BYTES,
    refuseHandshake: (req) =>
      handshakeRefusal({ addressBudget, trustedProxies: config.TRUSTED_PROXIES, metrics }, 'socketio', req),
  });
  const longpoll = createLongPollTransport(ctx, {
    store: deps.store,
    auth,
    extractors,
    metrics,
    pollWindowMs: config.LONGPOLL_TIMEOUT,
    sessionTtlSeconds: longPollSessionTtlSeconds(config),
    maxQueued: config.LONGPOLL_QUEUE_SIZE,
    maxResponseBytes: config.LONGPOLL_MAX_RESPONSE_BYTES,
    acks: new LongPollAcks({
      positions: ackPositions,
      timeoutMs: config.ACK_TIMEOUT,
      metrics: ackMetrics,
      onError: (err) => logger.warn({ err }, 'ack session not given its start (store unavailable?)'),
    }),
    lifecycle,
    // A record lives at most a connection token's life, then its session TTL and a touch period.
    lifecycleTtlSeconds:
      Math.ceil(config.CONNECTION_TOKEN_TTL / 1000) + longPollSessionTtlSeconds(config) + 120,
  });
  const channel = new ReplicaChannel({
    bus: deps.controlBus,
    replica: deps.replica,
    logger,
    store: deps.store,
    // A hub that died told nobody its connections ended: one live hub says so (gw.replica.gone).
    onGone: (replica) => lifecycle?.replicaGone(replica),
  });

  /** Long-poll connections live in the store; the others only on the replica that holds them. */
  /**
   * With the connect hook on, who a connection is was judged at its connect: a client's change with
   * a JWT of another session (or of one, where it had none) would make it someone the hook never
   * saw, so it is refused as the hook refuses (a new connect asks the hook). Without a JWT, or with
   * one of its own session (a renewal), a change goes on.
   */
  const identityFixed = config.CONNECT_CHECK !== undefined;
  const keepsIdentity = (held: string | undefined, change: SubscriptionChange) =>
    !identityFixed || change.sessionId === undefined || change.sessionId === held;
  const identityRefused = () => new SubscriptionRequestError(403, 'denied', 'Connection denied.');

  async function applyChange(replica: string, change: SubscriptionChange): Promise<boolean> {
    const lp = await longpoll.records.load(change.id);
    if (lp) {
      if (!keepsIdentity(lp.sessionId, change)) throw identityRefused();
      // Its session is the one of the JWT it holds now, as for a held connection (Hub.setSubscriptions).
      const joins = change.sessionId !== undefined && change.sessionId !== lp.sessionId;
      const next: LongPollRecord = {
        ...lp,
        ...keepGranted(change, lp.grantedSubscriptions),
        sessionId: joins ? change.sessionId : lp.sessionId,
      };
      const expiresAt = joins ? change.sessionExpiresAt : lp.expiresAt;
      if (expiresAt !== undefined) next.expiresAt = expiresAt;
      // The list is stored once, in the record; the queue only notes the change (longpoll-records.ts).
      await longpoll.records.save(change.id, next);
      await longpoll.records.subscriptionsChanged(change.id);
      await longpoll.subscriptionsChanged(change.id, next, 'client');
      if (joins) lookUpKill(change.sessionId!);
      return true;
    }
    if (replica === deps.replica) {
      const reply = changeHeld(change);
      if (reply === 'identity') throw identityRefused();
      return reply;
    }
    const reply = await channel.request(replica, change, config.CONTROL_REQUEST_TIMEOUT);
    if (reply === 'identity') throw identityRefused();
    return reply === true;
  }

  /** A change of a connection this replica holds: false when it is gone, 'identity' when refused. */
  function changeHeld(change: SubscriptionChange): boolean | 'identity' {
    const conn = hub.get(change.id);
    if (conn && !keepsIdentity(conn.sessionId, change)) return 'identity';
    const joins = change.sessionId !== undefined && change.sessionId !== conn?.sessionId;
    const applied = hub.setSubscriptions(change.id, change.subscriptions, change);
    // Its JWT's blacklist read may have raced a kill of the session, heard before the connection
    // joined it: looked up again now that the connection is in the session a kill finds.
    if (applied && joins) lookUpKill(change.sessionId!);
    return applied;
  }

  /** An operator's change of a long-poll connection: its record's JWT-inferred part ∪ `manual`. */
  async function subscribeLongPoll(id: string, manual: Subscription[]): Promise<boolean> {
    const lp = await longpoll.records.load(id);
    if (!lp) return false;
    const subscriptions = operatorChange.merge(lp.jwtSubscriptions ?? [], manual);
    await longpoll.records.save(id, { ...lp, subscriptions });
    await longpoll.records.subscriptionsChanged(id);
    await longpoll.subscriptionsChanged(id, { ...lp, subscriptions }, 'operator');
    return true;
  }

  const presence = createPresence(config, {
    replica: deps.replica,
    controlBus: deps.controlBus,
    store: deps.store,
    logger,
    registry: deps.registry,
    hub: () => hub,
    sightings: longpoll.sightings,
    maxJsonDepth: deps.maxJsonDepth ?? defaultMaxJsonDepth,
    bearerTokens,
    resolve,
    cors: config.CORS_ALLOWED_ORIGINS,
    lifecycle,
  });

  const historyPages = {
    source: {
      ring,
      compare: (a: string, b: string) => deps.fanoutBus.comparePositions(a, b),
      covers: (types: Iterable<string>, position: string) => hub.covers(types, position),
      wholeStream: () => hub.ringHoldsWholeStream(),
      epochChanged: (position: string) => hub.epochChanged(position),
      tail: brokerTail,
    },
    maxJsonDepth: deps.maxJsonDepth ?? defaultMaxJsonDepth,
    matcherFor: (subs: Subscription[]) => hub.index.matcherFor(subs),
    maxLimit: config.HISTORY_MAX_LIMIT,
    maxBytes: config.HISTORY_MAX_BYTES,
    addressOf: (req: IncomingMessage) => clientAddress(req, config.TRUSTED_PROXIES),
  };
  const history = createHistoryApi({
    ...historyPages,
    validate: (subs) => hub.index.check(subs),
    queries: new AddressBudget({ perMinute: config.HISTORY_QUERIES_PER_MINUTE }),
    bearerTokens,
    resolve,
    cors: config.CORS_ALLOWED_ORIGINS,
  });

  // The console's history view: the operator's queries counted apart from the clients'.
  const operatorHistory = createOperatorHistory({
    ...historyPages,
    queries: new AddressBudget({ perMinute: config.HISTORY_QUERIES_PER_MINUTE }),
  });

  const ack = createAckEndpoint({
    positions: ackPositions,
    auth,
    bearerTokens,
    addressBudget: new AddressBudget({ perMinute: config.ACK_REQUESTS_PER_ADDRESS_PER_MINUTE }),
    addressOf: (req) => clientAddress(req, config.TRUSTED_PROXIES),
    sessionBudget: new AddressBudget({ perMinute: config.ACK_REQUESTS_PER_MINUTE }),
    subjectBudget: new AddressBudget({ perMinute: config.ACK_REQUESTS_PER_SUBJECT_PER_MINUTE }),
    maxBodyBytes: config.ACK_MAX_BODY_BYTES,
    maxTokenBytes: deps.maxHeaderValueLength ?? defaultMaxHeaderValueLength,
    cors: config.CORS_ALLOWED_ORIGINS,
    metrics: ackMetrics,
    onJwtRefused: (reason) => logger.info({ reason }, 'JWT refused'),
  });

  const subscriptions = createSubscriptionsEndpoint({
    tokens,
    bearerTokens,
    resolve,
    apply: applyChange,
    addressOf: (req) => clientAddress(req, config.TRUSTED_PROXIES),
    limitChanges: createSubscriptionChangeLimit(deps.store, config.MAX_SUBSCRIPTION_CHANGES_PER_MINUTE),
    cors: config.CORS_ALLOWED_ORIGINS,
    maxBodyBytes: 256 * 1024,
  });

  // Its own channel, apart from subscription changes: its answers are larger (up to
  // CONNECTIONS_API_MAX_BYTES), so each replica's stream keeps fewer of them.
  const connectionsChannel = new ReplicaChannel({
    bus: deps.controlBus,
    replica: deps.replica,
    logger,
    store: deps.store,
    prefix: 'gw.connections.',
    maxLength: CONNECTIONS_STREAM_LENGTH,
  });
  const replicaConnections = new ReplicaConnections({
    replica: deps.replica,
    hub,
    sightings: longpoll.sightings,
    disconnectLongPoll: (id, reason, reconnect) => longpoll.disconnect(id, reason, reconnect),
    merge: operatorChange.merge,
    subscribeLongPoll,
    metrics,
  });
  const cluster = new ConnectionsCluster({
    gather: (request, ask) => connectionsChannel.gather(request, config.CONNECTIONS_API_TIMEOUT, ask),
    maxBytes: config.CONNECTIONS_API_MAX_BYTES,
  });
  const connectionsApi = createConnectionsApi({
    cluster,
    metrics,
    maxLimit: config.CONNECTIONS_API_MAX_LIMIT,
    operatorChange,
    blacklistedSessions: blacklistCounter(async () => (await deps.store.keys(blacklistPrefix)).length, 5_000),
  });
  // The operator console at /dashboard: its files, and its test event on the fan-out stream.
  const testEvent = createTestEvent({
    bus: deps.fanoutBus,
    topic: config.FANOUT_TOPIC,
    routed: config.FANOUT_ROUTING === 'interest',
    cluster,
    replica: deps.replica,
    maxLimit: config.CONNECTIONS_API_MAX_LIMIT,
  });
  const consoleFiles = createConsoleFiles();
  const dashboard = createDashboard(deps.registry);
  let unwatch: (() => Promise<void>) | undefined;
  let unwatchLongPoll: (() => Promise<void>) | undefined;

  const killSession = (sessionId: string) => {
    longpoll.sessionKilled(sessionId);
    const killed = hub.killSession(sessionId);
    if (killed) logger.info({ sessionId, killed }, 'session killed');
  };
  /** One session looked up in the blacklist after its connection is held; a failed look-up rescans all. */
  const lookUpKill = (sessionId: string) => {
    // One chain: a throw in the kill is caught as a failed read is, never an unhandled rejection.
    deps.store
      .exists(blacklistKey(sessionId))
      .then((found) => found && killSession(sessionId))
      .catch((err: unknown) => {
        logger.warn(
          { err, sessionId },
          'blacklist look-up of a new connection failed; looking up every session',
        );
        rescan.request();
      });
  };
  const rescan = new KillRescan({
    sessions: () => [...new Set([...hub.sessionIds(), ...longpoll.sessionIds()])],
    isBlacklisted: (sessionId) => deps.store.exists(blacklistKey(sessionId)),
    kill: killSession,
    onError: (err, attempt) => {
      // The store's command connection often comes back a moment after the watch's: say so once.
      if (attempt > 1)
        logger.warn({ err, attempt }, 'blacklist look-up after a store reconnect failed; trying again');
    },
    rescanned: (found) => {
      metrics.blacklistRescanned();
      logger.info({ found }, 'blacklist looked up again after the store watch reconnected');
    },
  });

  return {
    name: 'push-hub',
    hub,
    lifecycle,
    public: firstToHandle([
      (req, res) => sse.handle(req, res),
      (req, res) => longpoll.handle(req, res),
      subscriptions,
      presence.public,
      history.public,
      ack,
      (req, res) => socketio.handle(req, res),
    ]),
    internal: async (req, res) =>
      (await connectionsApi(req, res)) ||
      (await presence.internal(req, res)) ||
      (await operatorHistory(req, res)) ||
      (await testEvent(req, res)) ||
      consoleFiles(req, res) ||
      dashboard(req, res),
    upgrade: (req, socket, head) => ws.upgrade(req, socket, head) || socketio.upgrade(req, socket, head),
    async start() {
      const step = startUpSteps(logger);
      await step('the subscription-change channel', () =>
        channel.start((body) => changeHeld(body as SubscriptionChange)),
      );
      await step('the connections channel', () =>
        connectionsChannel.start((body) => replicaConnections.answer(body as ConnectionsRequest)),
      );
      await step('presence', () => presence.start());
      unwatch = await step('the blacklist watch', () =>
        deps.store.watch(blacklistPrefix, (change) => {
          if (change.kind === 'set') killSession(change.key.slice(blacklistPrefix.length));
          else if (change.kind === 'resync') {
            hub.storeWatchResumed();
            rescan.request();
          }
        }),
      );
      unwatchLongPoll = await step('long polling', () => longpoll.start());
      fanout = await step(`the fan-out stream (${config.FANOUT_TOPIC})`, () =>
        consumeFanout({
          bus: deps.fanoutBus,
          topic: config.FANOUT_TOPIC,
          hub,
          // With interest routing the ring holds only the types read: nothing to warm up before any is.
          warmUp: config.EVENT_BUFFER_WARMUP && !interest,
          routes: interest && new Set(),
          dispatched: (e) => longpoll.eventArrived(e),
          wants: (type) => longpoll.wants(type),
          metrics,
          logger,
        }),
      );
      if (fanout.liveAfter === undefined) ring.origin = fanout.origin;
      interest?.attach(fanout);
      deps.health.addCheck('fanout-bus', () => deps.fanoutBus.ping());
      logger.info(
        { replica: deps.replica, topic: config.FANOUT_TOPIC },
        'push hub consuming the fan-out stream',
      );
    },
    async stop() {
      const stopStarted = Date.now();
      // Events keep flowing to the connections not moved yet. A stream that still comes in (over a
      // connection accepted before the listener closed) is moved away with the others.
      longpoll.drain();
      const spreadMs = ((deps.drainTimeoutMs ?? 10_000) * config.DRAIN_SPREAD_PERCENT) / 100;
      const moved = await drainConnections(hub, {
        spreadMs,
        onBatch: (closed) => metrics.connectionsDrained(closed),
      });
      logger.info({ moved, spreadMs }, 'connections moved away');
      rescan.stop();
      ackWatch.close();
      interest?.close();
      await fanout?.close();
      await replay?.close();
      hub.closeAll();
      await unwatch?.();
      await unwatchLongPoll?.();
      await channel.close();
      await connectionsChannel.close();
      await presence.stop();
      sse.close();
      ws.close();
      await socketio.close();
      // The places this replica holds for connects that no longer come here, for the others.
      await rateLimit.close();
      // Every close the drain caused goes out before the bus is closed (within the drain window).
      // A tenth of the window is left for the host's own last steps.
      await lifecycle?.close(stopStarted + 0.9 * (deps.drainTimeoutMs ?? 10_000));
    },
  };
}

/**
 * FANOUT_ROUTING=interest on a bus that routes (NATS): the fan-out subscription follows the types
 * wanted here. Elsewhere the setting has no effect beyond a warning: every replica reads everything.
 */
function interestRouting(
  config: ConfigOf<typeof pushHubConfig>,
  bus: Bus,
  metrics: HubMetrics,
  logger: Logger,
): FanoutInterest | undefined {
  if (config.FANOUT_ROUTING !== 'interest') return undefined;
  const filterable = bus.capabilities.routes;
  if (filterable === undefined) {
    logger.warn(
      { bus: bus.kind },
      'FANOUT_ROUTING=interest needs a bus that routes (nats): reading everything',
    );
    return undefined;
  }
  return new FanoutInterest({
    compare: (a, b) => bus.comparePositions(a, b),
    maxTypes: Math.min(config.FANOUT_ROUTING_MAX_TYPES, filterable),
    lingerMs: config.FANOUT_ROUTING_LINGER,
    changed: (types) => metrics.fanoutRoutes(types),
  });
}

/**
 * `report` at most once per `ms`, told how many calls it missed since: a store outage fails every
 * write of every replica, and the log must not grow with the event rate.
 */
function onceEvery(ms: number, report: (err: unknown, missed: number) => void): (err: unknown) => void {
  let last = 0;
  let missed = 0;
  return (err) => {
    const now = Date.now();
    if (now - last < ms) {
      missed++;
      return;
    }
    last = now;
    report(err, missed);
    missed = 0;
  };
}

/**
 * The handlers in turn until one takes the request, awaiting only what a handler answers later:
 * an SSE connect (the first) returns its own promise, with no async wrapper and no turn of the
 * microtask queue for each handler before it (a reconnect storm's connects each paid both).
 */
function firstToHandle(handlers: RequestHandler[]): RequestHandler {
  const from = (i: number, req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean> => {
    for (; i < handlers.length; i++) {
      const handled = handlers[i]!(req, res);
      if (handled === true) return true;
      if (handled !== false) {
        const next = i + 1;
        return handled.then((taken) => taken || from(next, req, res));
      }
    }
    return false;
  };
  return (req, res) => from(0, req, res);
}
