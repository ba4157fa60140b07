/**
 * The steps every new connection passes, on every transport: resolve and authorise its
 * subscriptions, then the cross-replica connection rate limit, where a reconnect (a valid
 * connection token or a plausible resume position, reconnect-evidence.ts) counts against its own
 * budget. Rejections are counted by reason; an unreachable store or bus is a 503 refusal.
 */
import type { TransportKind } from './connection.ts';
import type { ConnectRequest } from './connect-request.ts';
import type { ConnectionRateLimit } from './connection-rate-limit.ts';
import type { HubMetrics } from './hub-metrics.ts';
import { type ResolvedSubscriptions, refusalOf, SubscriptionRequestError } from './subscription-request.ts';

export type ConnectionGate = (
  transport: TransportKind,
  req: ConnectRequest,
) => Promise<ResolvedSubscriptions>;

export function createConnectionGate(deps: {
  resolve(req: ConnectRequest): Promise<ResolvedSubscriptions>;
  rateLimit: ConnectionRateLimit;
  isReconnect(req: ConnectRequest): boolean;
  metrics: HubMetrics;
}): ConnectionGate {
  return async (transport, req) => {
    try {
      const resolved = await deps.resolve(req);
      const admitted = await deps.rateLimit(deps.isReconnect(req) ? 'reconnect' : 'new');
      if (admitted === undefined) {
        throw new SubscriptionRequestError(429, 'rate_limited', 'Reached maximum number of connections.');
      }
      deps.metrics.connectAdmitted(admitted);
      return resolved;
    } catch (err) {
      const refusal = refusalOf(err);
      if (!refusal) throw err;
      deps.metrics.connectionRejected(transport, refusal.reason);
      throw refusal;
    }
  };
}
