/** What the /v1 and /v2|/v3 handlers share. */
import type { Logger } from '@gatehouse/service-kit';
import type { BlacklistMetrics } from './blacklist-metrics.ts';
import type { BlacklistRequestLimits } from './blacklist-request.ts';
import type { SessionBlacklist } from './session-blacklist.ts';

export interface HandlerDeps {
  blacklist: SessionBlacklist;
  metrics: BlacklistMetrics;
  limits: BlacklistRequestLimits;
  logger: Logger;
}
