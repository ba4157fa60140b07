/**
 * The shared shape of every service's main.ts: read the common settings, make the logger, registry
 * and health, start tracing (when an OTLP or Zipkin exporter is configured), let the service wire
 * itself, then serve until SIGTERM/SIGINT. Shutdown drains, closes, then sends the spans still
 * buffered. An invalid configuration exits with status 2 and one message naming every bad variable.
 */
import type { TracingHandle } from '@gatehouse/tracing';
import { commonConfig, replicaId } from './common-config.ts';
import { setRedactedParameters } from './secret-parameters.ts';
import { ConfigError, type ConfigOf, loadConfig } from './env-config.ts';
import type { GatewayService } from './gateway-service.ts';
import { Health } from './health.ts';
import { loadInternalApiSetup } from './internal-api-app.ts';
import { InternalApiAuth } from './internal-api-auth.ts';
import { createLogger, type Logger } from './logger.ts';
import { createRegistry, type Registry } from './metrics.ts';
import { packageVersion } from './package-version.ts';
import { startHost } from './service-host.ts';
import { startServiceTracing } from './service-tracing.ts';
import { releaseStartUpMemory } from './start-up-memory.ts';
import { onShutdownSignal } from './shutdown.ts';
import { tlsSettingsFrom } from './tls-settings.ts';

export interface MainContext {
  config: ConfigOf<typeof commonConfig>;
  /** This process's replica id (REPLICA_ID or a generated one): tokens and spans use this one. */
  replica: string;
  logger: Logger;
  registry: Registry;
  health: Health;
}

export interface MainWiring {
  services: GatewayService[];
  /** Omit for a service with no public paths. */
  publicPort?: number;
  closeables?: Array<{ close(): Promise<void> | void }>;
}

export async function serviceMain(
  name: string,
  wire: (ctx: MainContext) => Promise<MainWiring>,
): Promise<void> {
  let logger: Logger | undefined;
  let tracing: TracingHandle | undefined;
  try {
    const config = loadConfig(commonConfig);
    setRedactedParameters(config.LOG_REDACT_PARAMS);
    logger = createLogger({
      name,
      format: config.LOG_FMT,
      level: config.LOG_LEVEL,
      projectId: config.GOOGLE_CLOUD_PROJECT,
    });
    const replica = replicaId(config.REPLICA_ID);
    tracing = await startServiceTracing(
      { serviceName: name, serviceInstanceId: replica, serviceVersion: packageVersion(process.argv[1]) },
      logger,
    );
    const registry = createRegistry({ service: name });
    const health = new Health();
    const tls = tlsSettingsFrom(config);
    const wiring = await wire({ config, replica, logger, registry, health });
    const host = await startHost({
      ...wiring,
      logger,
      registry,
      health,
      host: config.HOST,
      apiPort: config.API_PORT,
      internalApiAuth: InternalApiAuth.from(config),
      configureInternalApi: await loadInternalApiSetup(config.INTERNAL_API_MIDDLEWARE),
      limits: { maxHeaderValueLength: config.MAX_HEADER_VALUE_LENGTH },
      backlog: config.LISTEN_BACKLOG,
      drainTimeoutMs: config.SHUTDOWN_DRAIN_TIMEOUT_MS,
      tls,
    });
    releaseStartUpMemory();
    const spans = tracing;
    // The drain window, then time for the closeables and the last spans: a stuck drain still ends
    // before the kubelet's kill.
    onShutdownSignal(
      async () => {
        await host.stop();
        await spans.shutdown();
      },
      logger,
      config.SHUTDOWN_DRAIN_TIMEOUT_MS + 10_000,
      () => host.stopStep(),
    );
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`${name}: ${err.message}`);
      process.exit(2);
    }
    if (logger) logger.fatal({ err }, 'start-up failed');
    else console.error(err);
    await tracing?.shutdown().catch(() => {});
    process.exit(1);
  }
}
