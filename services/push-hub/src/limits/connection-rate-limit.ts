/**
 * MAX_CONNECTIONS_PER_MINUTE across all hub replicas together, a sliding window in the shared store
 * (sliding-window.ts) whose places each replica takes in blocks of at most 1 % of the limit
 * (leased-window.ts).
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
import { createLeasedWindow } from './leased-window.ts';
import type { Taken } from './sliding-window.ts';

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

/**
 * The admission, or undefined when the connect is refused: at once while this replica holds places
 * (leased-window.ts), a promise while a block is counted in the store. `close` gives the places
 * this replica holds and has not handed out back to the store.
 */
export type ConnectionRateLimit = ((
  kind: ConnectKind,
) => Admission | undefined | Promise<Admission | undefined>) & {
  close(): Promise<void>;
};

export function createConnectionRateLimit(
  store: Store,
  limits: RateLimits,
  now: () => number = Date.now,
): ConnectionRateLimit {
  const window = createLeasedWindow(store, now);
  const take = window.take;
  const admitNew = (): Admission | undefined | Promise<Admission | undefined> =>
    whenTaken(take('connections', limits.maxPerMinute), (taken) =>
      taken.ok ? { kind: 'new', refund: taken.giveBack } : undefined,
    );
  const limit = (kind: ConnectKind) => {
    if (kind === 'new') return admitNew();
    return whenTaken(take('reconnects', limits.maxReconnectsPerMinute), (taken) =>
      taken.ok ? { kind: 'reconnect' as const, refund: taken.giveBack } : admitNew(),
    );
  };
  return Object.assign(limit, { close: () => window.close() });
}

/** `then` on a place taken now or later, without a promise for one taken now. */
function whenTaken<T>(taken: Taken | Promise<Taken>, then: (t: Taken) => T | Promise<T>): T | Promise<T> {
  return taken instanceof Promise ? taken.then(then) : then(taken);
}
