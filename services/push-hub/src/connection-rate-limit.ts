/**
 * MAX_CONNECTIONS_PER_MINUTE across all hub replicas together: a sliding-window estimate over two
 * fixed one-minute counters in the shared store (the previous window weighted by how much of it
 * still overlaps the last 60 s), so there is no double burst at a window boundary.
 *
 * It counts admitted connections, not attempts: a connect the limit refuses takes its count back at
 * once, and one refused by a later check (a bad JWT, a denied subscription) gives its admission
 * back (`refund`). So a storm of refused attempts does not keep every newcomer out.
 *
 * Reconnects (a connect carrying a valid connection token or a resume position the hub holds, see
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

/** A connect the limit admitted, as `kind`; `refund` gives its place back when it is refused later. */
export interface Admission {
  kind: ConnectKind;
  refund(): Promise<void>;
}

/** Resolves with the admission, or undefined when the connect is refused. */
export type ConnectionRateLimit = (kind: ConnectKind) => Promise<Admission | undefined>;

export function createConnectionRateLimit(
  store: Store,
  limits: RateLimits,
  now: () => number = Date.now,
): ConnectionRateLimit {
  /** Takes a place in the counter's window; undefined (and nothing taken) when it is full. */
  const take = async (counter: string, max: number): Promise<(() => Promise<void>) | undefined> => {
    const t = now();
    const window = Math.floor(t / 60_000);
    const elapsed = (t % 60_000) / 60_000;
    const key = `ratelimit:${counter}:${window}`;
    const [current, previous] = await Promise.all([
      store.increment(key, { ttlSeconds: 120 }),
      store.get(`ratelimit:${counter}:${window - 1}`),
    ]);
    const giveBack = async () => {
      await store.increment(key, { by: -1, ttlSeconds: 120 });
    };
    if (Number(previous ?? 0) * (1 - elapsed) + current <= max) return giveBack;
    await giveBack();
    return undefined;
  };
  return async (kind) => {
    if (kind === 'reconnect') {
      const refund = await take('reconnects', limits.maxReconnectsPerMinute);
      if (refund) return { kind: 'reconnect', refund };
    }
    const refund = await take('connections', limits.maxPerMinute);
    return refund && { kind: 'new', refund };
  };
}
