/**
 * The steps every new connection passes, on every transport: resolve and authorise its
 * subscriptions, then the cross-replica connection rate limit. Rejections are counted by reason.
 */
import type { TransportKind } from './connection.ts';
import type { ConnectRequest } from './connect-request.ts';
import type { HubMetrics } from './hub-metrics.ts';
import { type ResolvedSubscriptions, SubscriptionRequestError } from './subscription-request.ts';

export type ConnectionGate = (
  transport: TransportKind,
  req: ConnectRequest,
) => Promise<ResolvedSubscriptions>;

export function createConnectionGate(deps: {
  resolve(req: ConnectRequest): Promise<ResolvedSubscriptions>;
  withinRateLimit(): Promise<boolean>;
  metrics: HubMetrics;
}): ConnectionGate {
  return async (transport, req) => {
    try {
      const resolved = await deps.resolve(req);
      if (!(await deps.withinRateLimit())) {
        throw new SubscriptionRequestError(429, 'rate_limited', 'Reached maximum number of connections.');
      }
      return resolved;
    } catch (err) {
      if (err instanceof SubscriptionRequestError) deps.metrics.connectionRejected(transport, err.reason);
      throw err;
    }
  };
}
