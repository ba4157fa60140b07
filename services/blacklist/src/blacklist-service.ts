/**
 * The blacklist service: the session blacklist API on the internal API port (`/v1` deprecated,
 * `/v2`, `/v3`), backed by the shared Store. It never talks to the hubs: writing the entry is the
 * kill signal, since every hub replica watches `blacklist:` in the same store, and every token
 * check (hubs, proxy) reads the same keys through @gatehouse/auth's BlacklistCheck.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { blacklistPrefix } from '@gatehouse/auth';
import {
  type ConfigOf,
  type GatewayService,
  type Logger,
  type Registry,
  Router,
  requestPath,
  sendText,
} from '@gatehouse/service-kit';
import type { Store } from '@gatehouse/store';
import { BlacklistMetrics } from './blacklist-metrics.ts';
import type { blacklistConfig } from './config.ts';
import { createCurrentHandlers } from './current-handlers.ts';
import type { HandlerDeps } from './handler-deps.ts';
import { SessionBlacklist } from './session-blacklist.ts';
import { createV1Handlers } from './v1-handlers.ts';

export interface BlacklistServiceDeps {
  store: Store;
  logger: Logger;
  registry: Registry;
}

/** Any version, so that one the service does not serve gets a 404 that says so. */
const apiPath = /^\/([^/]+)\/session-blacklist(?:\/[^/]*)?$/;
const servedVersions = ['v1', 'v2', 'v3'];

export function createBlacklistService(
  config: ConfigOf<typeof blacklistConfig>,
  deps: BlacklistServiceDeps,
): GatewayService {
  const logger = deps.logger.child({ service: 'blacklist' });
  const blacklist = new SessionBlacklist(deps.store);
  const metrics = new BlacklistMetrics(deps.registry, {
    count: () => blacklist.count(),
    maxAgeMs: config.BLACKLIST_COUNT_MAX_AGE,
    onError: (err) => logger.warn({ err }, 'cannot count blacklist entries; the gauge keeps its last value'),
  });
  const handlerDeps: HandlerDeps = {
    blacklist,
    metrics,
    limits: { maxValiditySeconds: config.BLACKLIST_MAX_VALIDITY },
    logger,
  };
  const router = new Router();
  const v1 = createV1Handlers(handlerDeps, config.BLACKLIST_V1_SUNSET);
  router.post('/v1/session-blacklist', v1.add).get('/v1/session-blacklist/:sessionId', v1.query);
  for (const version of ['v2', 'v3'] as const) {
    const current = createCurrentHandlers(handlerDeps, version);
    router
      .post(`/${version}/session-blacklist`, current.add)
      .get(`/${version}/session-blacklist/:sessionId`, current.query);
  }
  let unwatch: (() => Promise<void>) | undefined;

  return {
    name: 'blacklist',
    internal: (req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean> => {
      const match = apiPath.exec(requestPath(req));
      if (!match) return false;
      if (!servedVersions.includes(match[1]!)) {
        sendText(
          res,
          404,
          `Unknown API version "${match[1]}": the session blacklist is served under /v2 and /v3 (and the deprecated /v1).`,
        );
        return true;
      }
      return router.handle(req, res);
    },
    async start() {
      unwatch = await deps.store.watch(blacklistPrefix, () => metrics.blacklistChanged());
    },
    async stop() {
      await unwatch?.();
    },
  };
}
