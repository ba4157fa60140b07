/**
 * The REST engine on its own: its HTTP server on `rest.server.port` plus the internal API
 * (/health, /ready, /metrics) on API_PORT. SIGTERM / SIGINT drain and stop it.
 */
import {
  ConfigError,
  commonConfig,
  createLogger,
  createRegistry,
  Health,
  loadConfig,
  onShutdownSignal,
  startHost,
} from '@gatehouse/service-kit';
import { createRestEngine } from './rest-engine.ts';

try {
  const config = loadConfig(commonConfig);
  const logger = createLogger({ name: 'rest-engine', format: config.LOG_FMT, level: config.LOG_LEVEL });
  const registry = createRegistry();
  const health = new Health();
  const engine = createRestEngine({
    logger,
    registry,
    health,
    drainTimeoutMs: config.SHUTDOWN_DRAIN_TIMEOUT_MS,
  });
  const host = await startHost({
    services: [engine],
    logger,
    registry,
    health,
    host: config.HOST,
    apiPort: config.API_PORT,
    limits: { maxHeaderValueLength: config.MAX_HEADER_VALUE_LENGTH },
    drainTimeoutMs: config.SHUTDOWN_DRAIN_TIMEOUT_MS,
  });
  onShutdownSignal(host.stop, logger);
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(2);
  }
  throw err;
}
