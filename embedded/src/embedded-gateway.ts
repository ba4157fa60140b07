/**
 * The embedded default: every service in one process on the memory bus and memory store, behind
 * the public edge (INBOUND_PORT) and the internal API (API_PORT). Each service reads its own
 * settings from the same environment, exactly as it would standalone.
 *
 * Tracing: one OpenTelemetry SDK for the process (an SDK registers process-wide), started when an
 * exporter is configured (an OTLP endpoint, or Zipkin), as `service.name` `gatehouse`
 * (OTEL_SERVICE_NAME renames it). The services inside keep apart by their instrumentation scope
 * (`@gatehouse/proxy`, `@gatehouse/publisher` …), and a request's spans still nest across them.
 * stop() sends the spans still buffered.
 */
import { randomBytes } from 'node:crypto';
import type { BlockList } from 'node:net';
import { fileURLToPath } from 'node:url';
import { authConfig, startAuth } from '@gatehouse/auth';
import { blacklistConfig, createBlacklistService } from '@gatehouse/blacklist';
import { DEFAULT_MEMORY_BUS_RETENTION_BYTES, MemoryBus } from '@gatehouse/bus';
import {
  type ApiDefinition,
  createProxy,
  loadProxyConfig,
  proxyConfig,
  TargetAllowList,
  useEnvScope,
} from '@gatehouse/proxy';
import { createPublisher, publisherConfig } from '@gatehouse/publisher';
import { createPushHub, pushHubConfig } from '@gatehouse/push-hub';
import { createRestEngine } from '@gatehouse/rest-engine';
import {
  type ConfigOf,
  commonConfig,
  createLogger,
  createRegistry,
  type GatewayService,
  Health,
  InternalApiAuth,
  int,
  type InternalApiSetup,
  loadInternalApiSetup,
  loadConfig,
  type Logger,
  optionalStr,
  packageVersion,
  port,
  type RunningHost,
  replicaId,
  setRedactedParameters,
  startHost,
  startServiceTracing,
  tlsSettingsFrom,
  trustedProxiesConfig,
} from '@gatehouse/service-kit';
import { MemoryStore } from '@gatehouse/store';
import { type CutRelay, startCutRelay } from './demo/cut-relay.ts';
import { createDemoPage } from './demo/demo-page.ts';
import { openGatewayWarning } from './open-doors.ts';

export const embeddedConfig = {
  ...commonConfig,
  ...authConfig,
  ...pushHubConfig,
  ...publisherConfig,
  ...proxyConfig,
  ...blacklistConfig,
  INBOUND_PORT: port('public edge port: /_gw/… endpoints and the reverse proxy', 4000),
  DEMO_CLIENT_BUNDLE: optionalStr(
    "`@gatehouse/client`'s browser bundle: set (as `make run` does), the public edge serves the client demo page at /_gw/demo/",
  ),
  DEMO_RELAY_PORT: port(
    'port of the demo page\'s relay: its client connects through it, and its "cut" button cuts every connection of it',
    4002,
  ),
  MEMORY_BUS_MAX_BYTES: int(
    'bytes of messages the in-process bus keeps per topic for replays (the oldest go first)',
    DEFAULT_MEMORY_BUS_RETENTION_BYTES,
    { min: 1024 * 1024 },
  ),
};

/** Settings for a quiet gateway on loopback ports the system picks (tests, tools, a second instance). */
export const ephemeralGatewaySettings = {
  INBOUND_PORT: '0',
  API_PORT: '0',
  REST_SERVER_PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'silent',
} as const;

export interface EmbeddedGateway extends RunningHost {
  logger: Logger;
  /** The REST engine's own port (rest.server.port). */
  restPort: number | undefined;
}

/**
 * Without PROXY_CONFIG_FILE the edge routes /api/… to the REST engine of this process on loopback,
 * on the port it listens on (REST_SERVER_PORT, 0 included): its address joins PROXY_TARGET_ALLOW,
 * which refuses loopback targets otherwise. The engine serves what REST_CONFIG_FOLDER names.
 */
const ownRestApis = fileURLToPath(new URL('../../examples/proxy/apis.json', import.meta.url));
const ownRestTarget = '127.0.0.1';

/**
 * The example REST app (examples/rest-app; built, from dist/) for `make run` and the tests that
 * want it: without REST_CONFIG_FOLDER the engine serves no endpoints of its own.
 */
export const exampleAppSettings = {
  REST_CONFIG_FOLDER: fileURLToPath(
    new URL(`../../examples/rest-app/${import.meta.url.endsWith('.ts') ? '' : 'dist/'}`, import.meta.url),
  ),
} as const;

export interface EmbeddedOptions {
  /** Your own express middleware or routes on the internal API; overrides INTERNAL_API_MIDDLEWARE. */
  configureInternalApi?: InternalApiSetup;
  /**
   * The in-process bus (fan-out stream, control channels) instead of a new one; the gateway closes it
   * when it stops. Tests use it to put messages on the stream past the publisher.
   */
  bus?: MemoryBus;
}

export async function startEmbeddedGateway(
  configured: NodeJS.ProcessEnv = process.env,
  options: EmbeddedOptions = {},
): Promise<EmbeddedGateway> {
  const { env, generated } = withTokenSecret(configured);
  const loaded = loadConfig(embeddedConfig, env);
  const ownRestRoute = loaded.PROXY_CONFIG_FILE === undefined;
  const config = ownRestRoute
    ? { ...loaded, PROXY_TARGET_ALLOW: [...loaded.PROXY_TARGET_ALLOW, ownRestTarget] }
    : loaded;
  const initialApis = loadProxyConfig(
    config.PROXY_CONFIG_FILE ?? ownRestApis,
    useEnvScope(env, config.PROXY_USE_ENV_ALLOWED),
    new TargetAllowList(config.PROXY_TARGET_ALLOW),
    config.MAX_JSON_DEPTH,
  );
  setRedactedParameters(config.LOG_REDACT_PARAMS);
  const replica = replicaId(config.REPLICA_ID);
  const logger = createLogger({
    name: 'gatehouse',
    format: config.LOG_FMT,
    level: config.LOG_LEVEL,
    projectId: config.GOOGLE_CLOUD_PROJECT,
  });
  if (generated)
    logger.warn(
      'TOKEN_SECRET is not set: generated a random one for this process (connection tokens and correlation ids do not outlive it)',
    );
  const open = openGatewayWarning(config);
  if (open) logger.warn(open);
  const tracing = await startServiceTracing(
    {
      serviceName: 'gatehouse',
      serviceInstanceId: replica,
      serviceVersion: packageVersion(fileURLToPath(import.meta.url)),
      env,
    },
    logger,
  );
  try {
    const apis = { list: initialApis, ownRestRoute };
    const gateway = await startServices(config, env, apis, replica, logger, options);
    return {
      ...gateway,
      async stop() {
        await gateway.stop();
        await tracing.shutdown();
      },
    };
  } catch (err) {
    await tracing.shutdown();
    throw err;
  }
}

/**
 * One process needs no shared TOKEN_SECRET, so `make run` makes a random one per start instead of
 * refusing to start; a secret from the source would let anyone forge tokens.
 */
function withTokenSecret(env: NodeJS.ProcessEnv): { env: NodeJS.ProcessEnv; generated: boolean } {
  if (env['TOKEN_SECRET'] !== undefined && env['TOKEN_SECRET'].trim() !== '')
    return { env, generated: false };
  return { env: { ...env, TOKEN_SECRET: randomBytes(32).toString('base64url') }, generated: true };
}

async function startServices(
  config: ConfigOf<typeof embeddedConfig>,
  env: NodeJS.ProcessEnv,
  apis: { list: ApiDefinition[]; ownRestRoute: boolean },
  replica: string,
  logger: Logger,
  options: EmbeddedOptions,
): Promise<EmbeddedGateway> {
  const registry = createRegistry();
  const health = new Health();
  const bus = options.bus ?? new MemoryBus({ retentionBytes: config.MEMORY_BUS_MAX_BYTES });
  const store = new MemoryStore();
  health.addCheck('store', () => store.ping());
  const auth = await startAuth(config, store, logger);

  // Its own port (rest.server.port, 8085) on loopback unless REST_SERVER_HOST says otherwise: the
  // edge routes to it there, and a port open on HOST would be a way around the edge's checks.
  const restEngine = createRestEngine({
    env: { ...env, REST_SERVER_HOST: env['REST_SERVER_HOST'] ?? ownRestTarget },
    logger,
    registry,
    health,
    maxJsonDepth: config.MAX_JSON_DEPTH,
    // The proxy of this process reaches it on loopback, with the client's scheme and address in
    // X-Forwarded-* (what an untrusted client sent is dropped at the edge).
    trustedProxies: withLoopback(env['TRUSTED_PROXIES']),
    // A flow's gatehouse.event.publish reaches the hubs of this process, under the publisher's rules.
    fanoutBus: bus,
    auth,
  });
  const services: GatewayService[] = [
    restEngine,
    createPublisher(config, {
      fanoutBus: bus,
      store,
      sources: [],
      auth,
      logger,
      registry,
      health,
      maxJsonDepth: config.MAX_JSON_DEPTH,
    }),
    createPushHub(config, {
      fanoutBus: bus,
      controlBus: bus,
      store,
      auth,
      replica,
      logger,
      registry,
      health,
      drainTimeoutMs: config.SHUTDOWN_DRAIN_TIMEOUT_MS,
      maxJsonDepth: config.MAX_JSON_DEPTH,
    }),
    createBlacklistService(config, { store, logger, registry }),
    // Last: the reverse proxy answers every public path no other service claimed.
    createProxy(config, {
      store,
      auth,
      controlBus: bus,
      // Asked at the proxy's start, after the REST engine's: the port it really listens on.
      initialApis: () => (apis.ownRestRoute ? routedTo(apis.list, restEngine.port) : apis.list),
      replica,
      logger,
      registry,
      health,
      env,
      drainTimeoutMs: config.SHUTDOWN_DRAIN_TIMEOUT_MS,
      maxJsonDepth: config.MAX_JSON_DEPTH,
      trustedProxies: config.TRUSTED_PROXIES,
    }),
  ];

  // The demo page first, so the reverse proxy does not take /_gw/demo/ over.
  let relay: CutRelay | undefined;
  let edgePort: number | undefined;
  if (config.DEMO_CLIENT_BUNDLE !== undefined) {
    const edge = () =>
      edgePort === undefined ? undefined : { host: loopbackOf(config.HOST), port: edgePort };
    relay = await startCutRelay(edge, config.HOST, config.DEMO_RELAY_PORT);
    services.unshift(await createDemoPage(config.DEMO_CLIENT_BUNDLE, relay));
  }

  const host = await startHost({
    services,
    logger,
    registry,
    health,
    host: config.HOST,
    publicPort: config.INBOUND_PORT,
    apiPort: config.API_PORT,
    internalApiAuth: InternalApiAuth.from(config),
    configureInternalApi:
      options.configureInternalApi ?? (await loadInternalApiSetup(config.INTERNAL_API_MIDDLEWARE)),
    limits: { maxHeaderValueLength: config.MAX_HEADER_VALUE_LENGTH },
    drainTimeoutMs: config.SHUTDOWN_DRAIN_TIMEOUT_MS,
    tls: tlsSettingsFrom(config),
    closeables: [auth, bus, store, ...(relay ? [relay] : [])],
  });
  edgePort = host.publicPort;
  if (relay) logger.info({ url: `http://localhost:${host.publicPort}/_gw/demo/` }, 'client demo page');
  return { ...host, logger, restPort: restEngine.port };
}

/** The default route's APIs pointed at the REST engine's port; none when the engine is off. */
function routedTo(list: ApiDefinition[], restPort: number | undefined): ApiDefinition[] {
  if (restPort === undefined) return [];
  return list.map((api) => (api.proxy ? { ...api, proxy: { ...api.proxy, port: restPort } } : api));
}

/** TRUSTED_PROXIES plus loopback, where this process's own proxy comes from. */
function withLoopback(configured: string | undefined): BlockList | undefined {
  return trustedProxiesConfig.TRUSTED_PROXIES.parse(`${configured ?? ''},127.0.0.1,::1`);
}

/** Where this process's own listeners are reached from inside it. */
function loopbackOf(host: string): string {
  return host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
}
