/**
 * MAX_CONNECTIONS_PER_MINUTE across all hub replicas together: a sliding-window estimate over two
 * fixed one-minute counters in the shared store (the previous window weighted by how much of it
 * still overlaps the last 60 s), so there is no double burst at a window boundary.
 *
 * Reconnects (a connect carrying a valid connection token or a plausible resume position, see
 * reconnect-evidence.ts) count against a budget of their own, MAX_RECONNECTS_PER_MINUTE, so the
 * clients of a replica that drains, crashes or is rolled come back without being refused as new
 * connections. A reconnect beyond that budget is counted as a new connection (admitted while the
 * new-connection budget has room), so claiming to reconnect never gets more than both budgets.
 */
import type { Store } from '@gatehouse/store';

export type ConnectKind = 'new' | 'reconnect';

export interface RateLimits {
  maxPerMinute: number;
  maxReconnectsPerMinute: number;
}

/** Resolves with how the connect was admitted, or undefined when it is refused. */
export type ConnectionRateLimit = (kind: ConnectKind) => Promise<ConnectKind | undefined>;

export function createConnectionRateLimit(
  store: Store,
  limits: RateLimits,
  now: () => number = Date.now,
): ConnectionRateLimit {
  const within = async (counter: string, max: number): Promise<boolean> => {
    const t = now();
    const window = Math.floor(t / 60_000);
    const elapsed = (t % 60_000) / 60_000;
    const [current, previous] = await Promise.all([
      store.increment(`ratelimit:${counter}:${window}`, { ttlSeconds: 120 }),
      store.get(`ratelimit:${counter}:${window - 1}`),
    ]);
    return Number(previous ?? 0) * (1 - elapsed) + current <= max;
  };
  return async (kind) => {
    if (kind === 'reconnect' && (await within('reconnects', limits.maxReconnectsPerMinute)))
      return 'reconnect';
    return (await within('connections', limits.maxPerMinute)) ? 'new' : undefined;
  };
}
