/**
 * The REST engine as a GatewayService: `start()` loads the functions, renders the endpoints of
 * rest.yaml and opens the engine's own HTTP server on `rest.server.port`; `stop()` stops taking
 * connections and drains the open ones. Settings are read when the service is created, so a bad
 * configuration stops the host before anything listens.
 */
import { existsSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, BlockList } from 'node:net';
import { hostname } from 'node:os';
import type { Auth } from '@gatehouse/auth';
import type { Bus } from '@gatehouse/bus';
import {
  defaultMaxJsonDepth,
  dropUntrustedForwarding,
  type GatewayService,
  type Health,
  type Logger,
  type Registry,
} from '@gatehouse/service-kit';
import { type Tracer, trace } from '@opentelemetry/api';
import {
  defaultConfigFolder,
  loadAppProperties,
  loadOutboundConfig,
  loadRestFiles,
  loadRestSettings,
  loggingReport,
  mergeRestFiles,
  type ProblemReport,
  resolveLocation,
  resolveLocations,
  type RestSettings,
} from './config/index.ts';
import {
  actuatorEndpoints,
  builtinFunctions,
  flowAdapterRoute,
  FunctionRegistry,
  loadFunctions,
  responseRoute,
} from './functions/index.ts';
import { compileEndpoints, type Endpoint } from './endpoints/index.ts';
import { FlowAdapters } from './flow-adapters/index.ts';
import { checkFlowEndpoints, registerFlowFunctions, startFlowEngine } from './flows/index.ts';
import { outboundFunctions } from './outbound/index.ts';
import { requestHandler, RestMetrics } from './pipeline/index.ts';
import { RouteTable } from './routing/index.ts';
import { compileStaticContent, StaticFolder } from './static/index.ts';

export interface RestEngineOptions {
  logger: Logger;
  registry: Registry;
  /** Readiness turns false while the engine is switched on but not listening. */
  health?: Health;
  env?: NodeJS.ProcessEnv;
  /** OpenTelemetry tracer for the trace spans; the global one by default. */
  tracer?: Tracer;
  /** How long stop() waits for open requests before cutting connections. */
  drainTimeoutMs?: number;
  /** MAX_JSON_DEPTH: parsed request bodies nested deeper are refused (400). */
  maxJsonDepth?: number;
  /**
   * TRUSTED_PROXIES: the peers whose X-Forwarded-* headers name the client's address and scheme.
   * From any other peer those headers are removed before a function sees the request.
   */
  trustedProxies?: BlockList | undefined;
  /**
   * The bus of the fan-out stream for `gatehouse.event.publish` (the embedded gateway's in-process
   * bus); unset: FANOUT_BUS is connected at the first publish.
   */
  fanoutBus?: Bus | undefined;
  /** Verifies tokens for SUBMISSION_CHECK=jwt_validation on `gatehouse.event.publish`. */
  auth?: Auth | undefined;
}

export interface RestEngineService extends GatewayService {
  start(): Promise<void>;
  stop(): Promise<void>;
  readonly settings: RestSettings;
  /** The port the engine listens on once started (useful with port 0). */
  readonly port: number | undefined;
  readonly endpoints: readonly Endpoint[];
}

export function createRestEngine(options: RestEngineOptions): RestEngineService {
  const env = options.env ?? process.env;
  const givenFolder = env['REST_CONFIG_FOLDER']?.trim() || undefined;
  const configFolder = givenFolder ?? defaultConfigFolder;
  const props = loadAppProperties(configFolder, env);
  const settings = loadRestSettings(props, configFolder);
  const logger = options.logger.child({ service: 'rest-engine' });
  const report = loggingReport(logger);
  const metrics = RestMetrics.of(options.registry);
  const origin = `${settings['application.name']}-${hostname()}-${process.pid}`;
  // Flows that publish (outbound/): read here, so bad settings stop the host before it listens.
  const outbound = outboundFunctions(loadOutboundConfig(env), {
    fanoutBus: options.fanoutBus,
    auth: options.auth,
    maxJsonDepth: options.maxJsonDepth ?? defaultMaxJsonDepth,
    logger,
    registry: options.registry,
  });
  let server: Server | undefined;
  let endpoints: Endpoint[] = [];
  const tracer = options.tracer ?? trace.getTracer('@gatehouse/rest-engine');
  const maxJsonDepth = options.maxJsonDepth ?? defaultMaxJsonDepth;
  const adapters = new FlowAdapters({
    settings,
    props,
    env,
    logger,
    registry: options.registry,
    tracer,
    origin,
    maxJsonDepth,
  });

  options.health?.addCheck('rest-engine', () => {
    if (settings['rest.automation'] && !server?.listening) throw new Error('not listening');
  });
  options.health?.addCheck('flow-adapters', () => {
    if (settings['rest.automation'] && !adapters.ready) throw new Error('flow adapter consumers not reading');
  });

  return {
    name: 'rest-engine',
    settings,
    get port() {
      return server?.listening ? (server.address() as AddressInfo).port : undefined;
    },
    get endpoints() {
      return endpoints;
    },
    async start() {
      if (!settings['rest.automation']) {
        logger.info({ configFolder }, 'REST automation is off (rest.automation is not true)');
        return;
      }
      if (givenFolder === undefined)
        logger.warn(
          "REST_CONFIG_FOLDER is not set: the REST engine serves its built-in endpoints (/health, /info) and none of its own; set it to your application's folder (application.yml, rest.yaml, functions/)",
        );
      const registry = new FunctionRegistry();
      const dependencies = {
        mandatory: settings['mandatory.health.dependencies'],
        optional: settings['optional.health.dependencies'],
      };
      for (const fn of builtinFunctions(appIdentity(settings, origin), new Date(), dependencies, registry))
        registry.register(fn, 'built-in');
      for (const fn of outbound.functions) registry.register(fn, 'built-in');
      const folders = settings['functions.path'].map((p) => resolveLocation(p, configFolder));
      registerFlowFunctions(registry);
      const loaded = await loadFunctions(folders, registry, report);
      logger.info({ functions: loaded, folders }, 'functions loaded');
      const flows = startFlowEngine(settings, props, env, registry, logger);
      adapters.checkFlows(flows);

      for (const route of [...dependencies.mandatory, ...dependencies.optional].filter(
        (r) => !registry.has(r),
      ))
        report.warn(`Health dependency ${route} has no function: /health reports it as not found`);
      const rendered = renderEndpoints(settings, props, registry, report);
      endpoints = rendered.endpoints;
      metrics.endpoints = endpoints.length;
      for (const e of endpoints) logger.info(describeEndpoint(e));
      checkFlowEndpoints(endpoints, flows, logger);

      const staticFolder = openStaticFolder(settings, report);
      const pipeline = requestHandler({
        table: rendered.table,
        registry,
        flows,
        staticFolder,
        staticRules: rendered.staticRules,
        maxBodySize: settings['rest.server.max-body-size'],
        relayBufferBytes: settings['rest.relay.buffer-max-bytes'],
        maxParameters: settings['rest.server.max-parameters'],
        maxXmlNodes: settings['rest.server.max-xml-nodes'],
        maxJsonMembers: settings['rest.server.max-json-members'],
        multipart: {
          parts: settings['rest.multipart.max-parts'],
          files: settings['rest.multipart.max-files'],
          fields: settings['rest.multipart.max-fields'],
        },
        maxJsonDepth,
        trustedProxies: options.trustedProxies,
        origin,
        logger,
        metrics,
        tracer,
      });
      const handle = (req: IncomingMessage, res: ServerResponse) => {
        dropUntrustedForwarding(req, options.trustedProxies);
        // Every answer, errors that echo input included; a function may set its own value.
        res.setHeader('x-content-type-options', 'nosniff');
        pipeline(req, res);
      };
      server = createServer({ keepAliveTimeout: 65_000 }, handle);
      // `Expect: 100-continue`: a body declared too large is refused before the client sends it.
      const limit = settings['rest.server.max-body-size'];
      server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
        if (!(Number(req.headers['content-length']) > limit)) res.writeContinue();
        handle(req, res);
      });
      const port = await listen(server, settings['rest.server.port'], settings['rest.server.host']);
      logger.info({ port, endpoints: endpoints.length, static: staticFolder?.root }, 'REST engine listening');
      await adapters.start(flows);
    },
    async stop() {
      // First: records in flows finish and commit while the engine still runs flows.
      await adapters.stop(options.drainTimeoutMs ?? 10_000);
      if (server) await drain(server, options.drainTimeoutMs ?? 10_000);
      // After both: the flows of the records and requests they let finish may still publish.
      await outbound.close();
    },
  };
}

function renderEndpoints(
  settings: RestSettings,
  props: ReturnType<typeof loadAppProperties>,
  registry: FunctionRegistry,
  report: ProblemReport,
) {
  const paths = resolveLocations(settings['yaml.rest.automation'], settings.configFolder);
  const merged = mergeRestFiles(loadRestFiles(paths, props, report), report);
  const ctx = {
    // The flow adapter is no function: the flow target runs the endpoint's flow.
    routeExists: (route: string) => route === flowAdapterRoute || registry.has(route),
    reservedRoutes: new Set([responseRoute]),
    traceIdHeader: settings['http.trace.id.header'],
    correlationIdHeader: settings['http.correlation.id.header'],
    traceparentHeader: settings['http.traceparent.header'],
    report,
  };
  const user = compileEndpoints(merged, ctx);
  const taken = new Set(user.map((e) => e.url.normalised));
  const actuators = actuatorEndpoints
    .filter((a) => !taken.has(a.url))
    .map((value, index) => ({ value: { ...value, methods: [...value.methods] }, source: 'built-in', index }));
  const builtIn = compileEndpoints(
    { rest: actuators, cors: new Map(), headers: new Map(), staticContent: undefined, aborted: undefined },
    ctx,
  );
  const endpoints = [...user, ...builtIn];
  const table = new RouteTable(endpoints);
  const staticRules = compileStaticContent(merged.staticContent, ctx.routeExists, report);
  return { endpoints, table, staticRules };
}

function openStaticFolder(settings: RestSettings, report: ProblemReport): StaticFolder | undefined {
  const folder = resolveLocation(settings['static.html.folder'], settings.configFolder);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) {
    report.warn(`Static content folder ${folder} not found: no static content`);
    return undefined;
  }
  return new StaticFolder(folder, settings['static.html.cache-max-bytes']);
}

function appIdentity(settings: RestSettings, origin: string) {
  return {
    name: settings['application.name'],
    version: settings['info.app.version'],
    description: settings['info.app.description'],
    origin,
  };
}

function describeEndpoint(e: Endpoint): string {
  const auth = e.authentication
    ? ` -> ${e.authentication.kind === 'route' ? e.authentication.route : 'auth rules'} ->`
    : ' ->';
  const target = e.relay ? e.relay.origin.origin : [e.primary, ...e.secondaries].join(', ');
  const flow = e.flow ? `, flow=${e.flow}` : '';
  return `${e.label}${auth} [${target}], timeout=${e.timeoutMs / 1000}s, tracing=${e.tracing}${flow}`;
}

function drain(s: Server, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => s.closeAllConnections(), timeoutMs);
    s.close(() => {
      clearTimeout(timer);
      resolve();
    });
    s.closeIdleConnections();
  });
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
