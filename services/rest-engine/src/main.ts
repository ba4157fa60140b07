/**
 * The REST engine on its own: its HTTP server on `rest.server.port` plus the internal API
 * (/health, /ready, /metrics) on API_PORT. SIGTERM / SIGINT drain and stop it.
 */
import { serviceMain } from '@gatehouse/service-kit';
import { createRestEngine } from './rest-engine.ts';

await serviceMain('rest-engine', async ({ config, logger, registry, health }) => ({
  services: [
    createRestEngine({
      logger,
      registry,
      health,
      drainTimeoutMs: config.SHUTDOWN_DRAIN_TIMEOUT_MS,
      maxJsonDepth: config.MAX_JSON_DEPTH,
      trustedProxies: config.TRUSTED_PROXIES,
    }),
  ],
}));
