/**
 * MAX_CONNECTIONS_PER_MINUTE across all hub replicas together: a sliding-window estimate over two
 * fixed one-minute counters in the shared store (the previous window weighted by how much of it
 * still overlaps the last 60 s), so there is no double burst at a window boundary.
 */
import type { Store } from '@gatehouse/store';

export function createConnectionRateLimit(store: Store, maxPerMinute: number, now: () => number = Date.now) {
  return async (): Promise<boolean> => {
    const t = now();
    const window = Math.floor(t / 60_000);
    const elapsed = (t % 60_000) / 60_000;
    const [current, previous] = await Promise.all([
      store.increment(`ratelimit:connections:${window}`, { ttlSeconds: 120 }),
      store.get(`ratelimit:connections:${window - 1}`),
    ]);
    const estimate = Number(previous ?? 0) * (1 - elapsed) + current;
    return estimate <= maxPerMinute;
  };
}
