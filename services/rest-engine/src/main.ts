/**
 * The REST engine on its own: its HTTP server on `rest.server.port` plus the internal API
 * (/health, /ready, /metrics) on API_PORT. SIGTERM / SIGINT drain and stop it. With
 * SUBMISSION_CHECK=jwt_validation it verifies tokens as the publisher does (the store holds the
 * blacklist), for the flows' `gatehouse.event.publish`.
 */
import { type Auth, authConfig, startAuth } from '@gatehouse/auth';
import { submissionCheckConfig } from '@gatehouse/event-submission';
import { loadConfig, serviceMain } from '@gatehouse/service-kit';
import { connectStore, storeConfig } from '@gatehouse/store';
import { createRestEngine } from './rest-engine.ts';

await serviceMain('rest-engine', async ({ config, logger, registry, health }) => {
  const { SUBMISSION_CHECK } = loadConfig(submissionCheckConfig);
  const closeables: Array<{ close(): Promise<void> | void }> = [];
  let auth: Auth | undefined;
  if (SUBMISSION_CHECK === 'jwt_validation') {
    const store = await connectStore(loadConfig(storeConfig));
    auth = await startAuth(loadConfig(authConfig), store, logger);
    closeables.push(auth, store);
  }
  return {
    services: [
      createRestEngine({
        logger,
        registry,
        health,
        drainTimeoutMs: config.SHUTDOWN_DRAIN_TIMEOUT_MS,
        maxJsonDepth: config.MAX_JSON_DEPTH,
        trustedProxies: config.TRUSTED_PROXIES,
        auth,
      }),
    ],
    closeables,
  };
});
