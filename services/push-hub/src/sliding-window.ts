/**
 * A per-minute budget shared by every hub replica: a sliding-window estimate over two fixed
 * one-minute counters in the store (the previous window weighted by how much of it still overlaps
 * the last 60 s), so there is no double burst at a window boundary. The arithmetic is in integer
 * milliseconds, so a count exactly at the limit is never off by a rounding error.
 */
import type { Store } from '@gatehouse/store';

const MINUTE = 60_000;

/** A place taken (`giveBack` returns it), or how long until one is free. */
export type Taken = { ok: true; giveBack(): Promise<void> } | { ok: false; retryAfterSeconds: number };

/** Takes a place in `counter`'s window of `max` per minute; nothing is taken when it is full. */
export type SlidingWindow = (counter: string, max: number) => Promise<Taken>;

export function createSlidingWindow(store: Store, now: () => number = Date.now): SlidingWindow {
  return async (counter, max) => {
    const t = now();
    const window = Math.floor(t / MINUTE);
    const elapsed = t % MINUTE;
    const key = `ratelimit:${counter}:${window}`;
    const [current, previousText] = await Promise.all([
      store.increment(key, { ttlSeconds: 120 }),
      store.get(`ratelimit:${counter}:${window - 1}`),
    ]);
    const previous = Number(previousText ?? 0);
    const giveBack = async () => {
      await store.increment(key, { by: -1, ttlSeconds: 120 });
    };
    if (previous * (MINUTE - elapsed) + current * MINUTE <= max * MINUTE) return { ok: true, giveBack };
    await giveBack();
    return { ok: false, retryAfterSeconds: secondsUntilRoom(previous, current - 1, max, elapsed) };
  };
}

/**
 * When one more fits, from counts of the previous and the current window and the milliseconds
 * into the current one: once the previous window weighs little enough, or, when the current one
 * is full by itself, that far into the next window (where it is the previous). At least 1 s.
 */
function secondsUntilRoom(previous: number, current: number, max: number, elapsed: number): number {
  let waitMs: number;
  if (current + 1 <= max) {
    // previous × (MINUTE − e) ≤ (max − current − 1) × MINUTE
    const at = Math.ceil((MINUTE * (previous - (max - current - 1))) / previous);
    waitMs = at - elapsed;
  } else {
    // In the next window: current × (MINUTE − f) + MINUTE ≤ max × MINUTE
    const at = Math.ceil((MINUTE * (current - (max - 1))) / current);
    waitMs = MINUTE - elapsed + at;
  }
  return Math.max(1, Math.ceil(waitMs / 1000));
}
