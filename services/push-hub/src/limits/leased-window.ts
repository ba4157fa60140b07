/**
 * The shared sliding window (sliding-window.ts), taken in blocks: a replica counts up to a block of
 * places in the store at once and hands them out itself, so a burst of connects (a reconnect storm
 * after a replica dies) costs one store round trip per block instead of two per connect.
 *
 * Places a replica holds and has not handed out count against every replica. So that this costs
 * little accuracy, a block is at most 1 % of the limit (limits under 200 are taken one place at a
 * time, exactly as before), at most 64 places; unused places go back to the store once no take has
 * come for `idleReturnMs` (1 s), when their window ends (to that window's count), and at shutdown.
 * So another replica can be refused at most one block per replica early, and only while a burst
 * is under way; a replica that is killed leaves its unused places counted until its window ages out.
 * A place given back by a connect refused later (a bad JWT) is handed out again without a round trip.
 */
import type { Store } from '@gatehouse/store';
import { createBlockTake, giveBack, type Taken, windowOf } from './sliding-window.ts';

const MAX_BLOCK = 64;

/** How many places are counted in the store at once for a limit of `max` per minute. */
export function leaseBlockOf(max: number): number {
  return Math.max(1, Math.min(MAX_BLOCK, Math.floor(max / 100)));
}

export interface LeasedWindow {
  /**
   * Takes a place in `counter`'s window of `max` per minute; nothing is taken when it is full. A
   * place this replica holds is handed out as it is, not in a promise: most connects of a burst
   * get one, and a promise each (and the turn of the microtask queue awaiting it) was pure overhead.
   */
  take(counter: string, max: number): Taken | Promise<Taken>;
  /** Gives every place held and not handed out back to the store. */
  close(): Promise<void>;
}

/** The places of one counter this replica holds: counted in the store for `window`, not handed out. */
interface Lease {
  counter: string;
  window: number;
  unused: number;
  /** Takes that found no place, waiting for the block being counted in the store. */
  waiting: Array<(answer: Taken | Promise<Taken>) => void>;
  /** Whether a block is being counted in the store now. */
  fetching: boolean;
  lastTake: number;
  idleTimer: NodeJS.Timeout | undefined;
}

export function createLeasedWindow(
  store: Store,
  now: () => number = Date.now,
  options: { idleReturnMs?: number } = {},
): LeasedWindow {
  const idleReturnMs = options.idleReturnMs ?? 1000;
  const takeBlock = createBlockTake(store, now);
  const leases = new Map<string, Lease>();

  /** Unused places back to the store (in the background: a take never waits for it). */
  function release(lease: Lease): Promise<void> {
    const n = lease.unused;
    lease.unused = 0;
    if (n === 0) return Promise.resolve();
    return giveBack(store, lease.counter, lease.window, n).catch(() => {
      // The store is unreachable: the places stay counted until their window ages out.
    });
  }

  /** Moves the lease to a later window; what it held in the old one goes back to that one. */
  function moveTo(lease: Lease, window: number): void {
    if (lease.window === window) return;
    void release(lease);
    lease.window = window;
  }

  function keepIdleWatch(lease: Lease): void {
    lease.lastTake = performance.now();
    if (lease.idleTimer) return;
    lease.idleTimer = setTimeout(function check() {
      const idle = performance.now() - lease.lastTake;
      if (idle >= idleReturnMs || lease.unused === 0) {
        lease.idleTimer = undefined;
        void release(lease);
      } else {
        lease.idleTimer = setTimeout(check, idleReturnMs - idle);
        lease.idleTimer.unref();
      }
    }, idleReturnMs);
    lease.idleTimer.unref();
  }

  /**
   * One place handed out in the lease's window. Given back, it is handed out again here, except
   * under a limit taken one place at a time, which holds exactly: there it goes back to the store.
   */
  function handOut(lease: Lease, max: number): Taken {
    const window = lease.window;
    keepIdleWatch(lease);
    return {
      ok: true,
      giveBack: async () => {
        if (lease.window === window && leaseBlockOf(max) > 1) lease.unused++;
        else await giveBack(store, lease.counter, window, 1);
      },
    };
  }

  function take(counter: string, max: number): Taken | Promise<Taken> {
    const window = windowOf(now());
    let lease = leases.get(counter);
    if (!lease) {
      lease = { counter, window, unused: 0, waiting: [], fetching: false, lastTake: 0, idleTimer: undefined };
      leases.set(counter, lease);
    }
    moveTo(lease, window);
    if (lease.unused > 0 && lease.waiting.length === 0) {
      lease.unused--;
      return handOut(lease, max);
    }
    const answer = new Promise<Taken>((resolve) => lease.waiting.push(resolve));
    if (!lease.fetching) void fetchFor(lease, max);
    return answer;
  }

  /**
   * Blocks from the store until every waiting take has its answer, first come first served. A block
   * of none means the window is full now: every take waiting is refused, as each would have been.
   */
  async function fetchFor(lease: Lease, max: number): Promise<void> {
    lease.fetching = true;
    try {
      while (lease.waiting.length > 0) {
        const block = await takeBlock(lease.counter, max, leaseBlockOf(max));
        const waiting = lease.waiting.splice(0);
        if (block.granted === 0) {
          for (const answer of waiting) answer({ ok: false, retryAfterSeconds: block.retryAfterSeconds });
          continue;
        }
        if (block.window < lease.window) {
          // The window ended while the block was counted: its places go to the waiting takes
          // there, the rest back to that window.
          const served = waiting.splice(0, block.granted);
          lease.waiting.unshift(...waiting);
          const left = block.granted - served.length;
          if (left > 0) await giveBack(store, lease.counter, block.window, left).catch(() => {});
          for (const answer of served)
            answer({ ok: true, giveBack: () => giveBack(store, lease.counter, block.window, 1) });
          continue;
        }
        moveTo(lease, block.window);
        lease.unused += block.granted;
        while (waiting.length > 0 && lease.unused > 0) {
          lease.unused--;
          waiting.shift()!(handOut(lease, max));
        }
        lease.waiting.unshift(...waiting);
      }
    } catch (err) {
      // The store is unreachable: every take waiting fails as a single one would have.
      for (const answer of lease.waiting.splice(0)) answer(Promise.reject(err));
    } finally {
      lease.fetching = false;
    }
  }

  return {
    take,
    async close() {
      for (const lease of leases.values()) clearTimeout(lease.idleTimer);
      await Promise.all([...leases.values()].map(release));
    },
  };
}
