/**
 * The embedded default: every service in one process on the memory bus and memory store, behind
 * the public edge (INBOUND_PORT) and the internal API (API_PORT). Each service reads its own
 * settings from the same environment, exactly as it would standalone.
 */
import { MemoryBus } from '@gatehouse/bus';
import {
  commonConfig,
  createLogger,
  createRegistry,
  type GatewayService,
  Health,
  loadConfig,
  type Logger,
  port,
  type RunningHost,
  startHost,
} from '@gatehouse/service-kit';
import { MemoryStore } from '@gatehouse/store';

export const embeddedConfig = {
  ...commonConfig,
  INBOUND_PORT: port('public edge port: /_gw/… endpoints and the reverse proxy', 4000),
};

export interface EmbeddedGateway extends RunningHost {
  logger: Logger;
}

export async function startEmbeddedGateway(env: NodeJS.ProcessEnv = process.env): Promise<EmbeddedGateway> {
  const config = loadConfig(embeddedConfig, env);
  const logger = createLogger({ name: 'gatehouse', format: config.LOG_FMT, level: config.LOG_LEVEL });
  const registry = createRegistry();
  const health = new Health();
  const bus = new MemoryBus();
  const store = new MemoryStore();
  health.addCheck('bus', () => bus.ping());
  health.addCheck('store', () => store.ping());

  // Services plug in here as they are built; each gets the shared bus, store, logs and metrics.
  const services: GatewayService[] = [];

  const host = await startHost({
    services,
    logger,
    registry,
    health,
    host: config.HOST,
    publicPort: config.INBOUND_PORT,
    apiPort: config.API_PORT,
    limits: { maxHeaderValueLength: config.MAX_HEADER_VALUE_LENGTH },
    drainTimeoutMs: config.SHUTDOWN_DRAIN_TIMEOUT_MS,
    closeables: [bus, store],
  });
  return { ...host, logger };
}
