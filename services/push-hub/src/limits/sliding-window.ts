/**
 * A per-minute budget shared by every hub replica: a sliding-window estimate over two fixed
 * one-minute counters in the store (the previous window weighted by how much of it still overlaps
 * the last 60 s), so there is no double burst at a window boundary. The arithmetic is in integer
 * milliseconds, so a count exactly at the limit is never off by a rounding error.
 */
import type { Store } from '@gatehouse/store';

const MINUTE = 60_000;

/** The one-minute window a time (ms since the epoch) falls in. */
export const windowOf = (t: number) => Math.floor(t / MINUTE);

/** A place taken (`giveBack` returns it), or how long until one is free. */
export type Taken = { ok: true; giveBack(): Promise<void> } | { ok: false; retryAfterSeconds: number };

/** Takes a place in `counter`'s window of `max` per minute; nothing is taken when it is full. */
export type SlidingWindow = (counter: string, max: number) => Promise<Taken>;

/**
 * Up to `n` places taken at once, in `window` (fewer near the limit; none past it, with the seconds
 * until one is free). The places are counted in the store until given back.
 */
export interface Block {
  granted: number;
  window: number;
  retryAfterSeconds: number;
}

export type TakeBlock = (counter: string, max: number, n: number) => Promise<Block>;

export const windowKey = (counter: string, window: number) => `ratelimit:${counter}:${window}`;

/** Gives `n` places back to `counter`'s count for `window`. */
export async function giveBack(store: Store, counter: string, window: number, n: number): Promise<void> {
  await store.increment(windowKey(counter, window), { by: -n, ttlSeconds: 120 });
}

export function createSlidingWindow(store: Store, now: () => number = Date.now): SlidingWindow {
  const takeBlock = createBlockTake(store, now);
  return async (counter, max) => {
    const { granted, window, retryAfterSeconds } = await takeBlock(counter, max, 1);
    if (granted === 0) return { ok: false, retryAfterSeconds };
    return { ok: true, giveBack: () => giveBack(store, counter, window, 1) };
  };
}

/**
 * Counts `n` more in the current window, then keeps as many as fit: with the previous window weighted
 * by how much of it still overlaps the last 60 s, a count c fits while
 * previous × (MINUTE − elapsed) + c × MINUTE ≤ max × MINUTE. What does not fit is given back at once.
 */
export function createBlockTake(store: Store, now: () => number = Date.now): TakeBlock {
  return async (counter, max, n) => {
    const t = now();
    const window = windowOf(t);
    const elapsed = t % MINUTE;
    const [current, previousText] = await Promise.all([
      store.increment(windowKey(counter, window), { by: n, ttlSeconds: 120 }),
      store.get(windowKey(counter, window - 1)),
    ]);
    const previous = Number(previousText ?? 0);
    const fits = Math.floor((max * MINUTE - previous * (MINUTE - elapsed)) / MINUTE);
    const before = current - n;
    const granted = Math.max(0, Math.min(n, fits - before));
    if (granted < n) await giveBack(store, counter, window, n - granted);
    const retryAfterSeconds = granted === 0 ? secondsUntilRoom(previous, before, max, elapsed) : 0;
    return { granted, window, retryAfterSeconds };
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
