/**
 * The proxy service: the reverse proxy on the public edge (the catch-all: list it last), the API
 * definition endpoints `/v2|v3/apis` and the correlated-response endpoints `/v1|v2|v3/responses`
 * on the internal API. Definitions live in the Store; pending requests in this replica's memory.
 */
import type { BlockList } from 'node:net';
import type { Auth } from '@gatehouse/auth';
import { type SchemaRegistryClient, schemaRegistryFrom } from '@gatehouse/avro';
import type { Bus, Subscription } from '@gatehouse/bus';
import { isGatewayEventType } from '@gatehouse/cloudevents';
import {
  ConfigError,
  type ConfigOf,
  defaultMaxJsonDepth,
  dropUntrustedForwarding,
  type GatewayService,
  type Health,
  type Logger,
  type Registry,
} from '@gatehouse/service-kit';
import type { Store } from '@gatehouse/store';
import { type ApiDefinition, createApisEndpoint, DefinitionStore, useEnvScope } from './definitions/index.ts';
import type { proxyConfig } from './config.ts';
import { DefinitionSync, JwtGuard } from './routing/index.ts';
import { KafkaEventPublisher, KinesisEventPublisher } from './events/index.ts';
import { HttpForwarder, TargetAllowList, UpgradeForwarder } from './forwarding/index.ts';
import type { NatsTarget } from './nats/index.ts';
import {
  createResponsesEndpoint,
  PendingResponses,
  ResponseRouter,
  startResponseConsumers,
} from './responses/index.ts';
import { createProxyHandler, createProxyUpgrade, createRequestLog, ProxyMetrics } from './edge/index.ts';

export interface ProxyDeps {
  store: Store;
  auth: Auth;
  /** Carries responses to the replica holding the request (Redis in production). */
  controlBus: Bus;
  /** Kafka for kafka targets, response topics and the request log; absent: Kafka is off. */
  kafka?: Bus | undefined;
  /** Kinesis for kinesis targets and response streams; absent: Kinesis is off. */
  kinesis?: Bus | undefined;
  /** Core NATS for nats targets; absent: NATS is off. */
  nats?: NatsTarget | undefined;
  /**
   * Definitions from PROXY_CONFIG_FILE, already validated (config-source.ts); a function is asked
   * at start (the embedded gateway's route to its own REST engine names the port it listens on).
   */
  initialApis: ApiDefinition[] | (() => ApiDefinition[]);
  /**
   * TRUSTED_PROXIES: the peers whose Forwarded / X-Forwarded-* headers are passed on (appended to);
   * from anyone else they are dropped, and the upstream gets only this proxy's.
   */
  trustedProxies?: BlockList | undefined;
  /** This replica's id, carried in its correlation ids (unique per process). */
  replica: string;
  logger: Logger;
  registry: Registry;
  /** The registry client main.ts made and checked; absent: made from the config here. */
  schemaRegistry?: SchemaRegistryClient | undefined;
  health: Health;
  /** The process environment; use_env sees only PROXY_USE_ENV_ALLOWED of it (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** How long stop() lets forwarded requests finish (default 10 s). */
  drainTimeoutMs?: number;
  /** MAX_JSON_DEPTH: published events and API definitions nested deeper are refused (400). */
  maxJsonDepth?: number;
}

export type ProxyService = GatewayService & {
  /** Resolves once every replica-local copy reflects the Store (tests, embedded runner). */
  resync(): Promise<void>;
};

export function createProxy(config: ConfigOf<typeof proxyConfig>, deps: ProxyDeps): ProxyService {
  // Every wrapped request would be refused as a forged gateway event.
  if (isGatewayEventType(config.PROXY_WRAPPED_EVENT_TYPE))
    throw new ConfigError([
      `PROXY_WRAPPED_EVENT_TYPE ${JSON.stringify(config.PROXY_WRAPPED_EVENT_TYPE)} is in the gateway's own namespace (gw.…); choose another type`,
    ]);
  const logger = deps.logger.child({ service: 'proxy' });
  const maxJsonDepth = deps.maxJsonDepth ?? defaultMaxJsonDepth;
  const definitions = new DefinitionStore(deps.store);
  const useEnv = useEnvScope(deps.env ?? process.env, config.PROXY_USE_ENV_ALLOWED);
  const targets = new TargetAllowList(config.PROXY_TARGET_ALLOW);
  const sync = new DefinitionSync({
    store: deps.store,
    definitions,
    logger,
    resyncIntervalMs: config.PROXY_SYNC_INTERVAL,
    env: useEnv,
  });
  const pending = new PendingResponses(deps.auth.correlationIds, deps.replica);
  const metrics = new ProxyMetrics(deps.registry, () => pending.size);
  const router = new ResponseRouter(pending, {
    controlBus: deps.controlBus,
    store: deps.store,
    logger,
    timeoutMs: config.PROXY_CONTROL_TIMEOUT,
  });
  const forwarder = new HttpForwarder({
    connectionsPerOrigin: config.PROXY_MAX_CONNECTIONS_PER_TARGET,
    connectTimeoutMs: config.PROXY_CONNECT_TIMEOUT,
    bodyIdleTimeoutMs: config.PROXY_BODY_IDLE_TIMEOUT,
    targets,
  });
  const guard = new JwtGuard(deps.auth);
  const schemaRegistry = deps.schemaRegistry ?? schemaRegistryFrom(config);
  const requestLog = createRequestLog({
    sinks: config.REQUEST_LOG,
    logger,
    kafka: deps.kafka,
    topic: config.KAFKA_LOG_TOPIC,
    avro: { subject: config.KAFKA_LOG_SCHEMA, registry: schemaRegistry },
  });
  const proxy = createProxyHandler({
    table: () => sync.table,
    forwarder,
    guard,
    pending,
    publishers: {
      kafka: deps.kafka && new KafkaEventPublisher(deps.kafka, config.PROXY_KAFKA_EVENT_MODE, schemaRegistry),
      kinesis: deps.kinesis && new KinesisEventPublisher(deps.kinesis, schemaRegistry),
    },
    nats: deps.nats,
    metrics,
    requestLog,
    cors: config.CORS_ALLOWED_ORIGINS,
    timeouts: {
      recvMs: config.PROXY_RECV_TIMEOUT,
      responseMs: {
        kafka: config.PROXY_KAFKA_RESPONSE_TIMEOUT,
        http_async: config.PROXY_HTTP_ASYNC_RESPONSE_TIMEOUT,
        kinesis: config.PROXY_KINESIS_RESPONSE_TIMEOUT,
        nats: config.PROXY_NATS_RESPONSE_TIMEOUT,
      },
    },
    wrappedEventType: config.PROXY_WRAPPED_EVENT_TYPE,
    maxEventBytes: config.PROXY_MAX_EVENT_BYTES,
    maxJsonDepth,
    logger,
  });
  const tunnels = new UpgradeForwarder({
    connectTimeoutMs: config.PROXY_CONNECT_TIMEOUT,
    idleTimeoutMs: config.PROXY_BODY_IDLE_TIMEOUT,
    targets,
  });
  const upgrade = createProxyUpgrade({
    table: () => sync.table,
    forwarder: tunnels,
    guard,
    metrics,
    requestLog,
    cors: config.CORS_ALLOWED_ORIGINS,
    recvTimeoutMs: config.PROXY_RECV_TIMEOUT,
    logger,
  });
  const apis = createApisEndpoint({
    definitions,
    env: useEnv,
    targets,
    onChange: (id) => sync.refresh(id, true),
    maxJsonDepth,
  });
  const responses = createResponsesEndpoint({
    router,
    maxBodyBytes: config.PROXY_MAX_EVENT_BYTES,
    maxJsonDepth,
    onDelivery: (result) => metrics.correlatedResponse('http', result),
  });
  let consumers: Subscription[] = [];

  return {
    name: 'proxy',
    public: (req, res) => {
      dropUntrustedForwarding(req, deps.trustedProxies);
      return proxy(req, res);
    },
    upgrade: (req, socket, head) => {
      dropUntrustedForwarding(req, deps.trustedProxies);
      return upgrade(req, socket, head);
    },
    internal: async (req, res) => (await apis.handle(req, res)) || responses.handle(req, res),
    resync: () => sync.resync(),
    async start() {
      const initialApis = typeof deps.initialApis === 'function' ? deps.initialApis() : deps.initialApis;
      for (const api of initialApis) {
        const outcome = await definitions.seed(api);
        logger.info({ api: api.id, outcome }, 'API definition from PROXY_CONFIG_FILE');
      }
      await sync.start();
      await router.start();
      consumers = await startResponseConsumers({
        kafka: deps.kafka && { bus: deps.kafka, topics: config.PROXY_KAFKA_RESPONSE_TOPICS },
        kinesis: deps.kinesis && { bus: deps.kinesis, topics: config.PROXY_KINESIS_RESPONSE_STREAMS },
        router,
        maxJsonDepth,
        logger,
        onResponse: (source, result) => metrics.correlatedResponse(source, result),
      });
      deps.health.addCheck('proxy-store', () => deps.store.ping());
      logger.info({ replica: deps.replica, endpoints: sync.table.size }, 'proxy ready');
    },
    async stop() {
      pending.cancelAll();
      for (const c of consumers) await c.close();
      await router.close();
      await sync.stop();
      // Forwarded requests and WebSocket tunnels get the same drain window, then are cut.
      await Promise.all([
        forwarder.close(deps.drainTimeoutMs ?? 10_000),
        tunnels.close(deps.drainTimeoutMs ?? 10_000),
      ]);
    },
  };
}
