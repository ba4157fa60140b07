/**
 * A short mutual exclusion over the shared Store, for a read-then-write that must not interleave
 * with the same sequence on another replica. It is a key set only-if-absent with an expiry (SET NX
 * PX on Redis): the holder deletes it when done, and a holder that dies mid-way blocks the others
 * for at most `ttlSeconds`. Release compares the holder's random token first, so a holder that
 * overran its expiry does not delete a lock someone else took meanwhile (the compare and the
 * delete are two commands: that overrun case is narrowed, not closed, which is fine for what the
 * lock guards here, a few milliseconds of work).
 *
 * A take whose answer never came (the store paused or cut off: the command timed out on our side)
 * may still land when the store goes on, leaving a lock nobody holds for its whole expiry. This
 * process remembers the tokens of such takes, and adopts a lock that turns out to hold one of them:
 * the work that take was for never ran, so nothing else holds it.
 */
import { randomUUID } from 'node:crypto';
import { isUnavailable } from '@gatehouse/service-kit';
import type { Store } from '@gatehouse/store';

/** Tokens of takes whose outcome is unknown, by lock key, with when they stop mattering. */
const unanswered = new Map<string, Map<string, number>>();

export interface StoreLockOptions {
  /** Expiry of the lock key: the longest a crashed holder can block others. */
  ttlSeconds: number;
  /** How long to wait for a busy lock before giving up with LockTimeoutError. */
  waitMs: number;
  /** Pause between attempts while the lock is busy. */
  retryMs: number;
}

export class LockTimeoutError extends Error {
  override readonly name = 'LockTimeoutError';
}

export async function withStoreLock<T>(
  store: Store,
  key: string,
  options: StoreLockOptions,
  work: () => Promise<T>,
): Promise<T> {
  let token: string = randomUUID();
  const deadline = Date.now() + options.waitMs;
  while (!(await take(store, key, token, options.ttlSeconds))) {
    const holder = await store.get(key);
    if (holder !== undefined && adopt(key, holder)) {
      token = holder;
      break;
    }
    if (Date.now() >= deadline)
      throw new LockTimeoutError(`lock ${key} still busy after ${options.waitMs} ms`);
    // Jitter, so waiting replicas do not retry in lockstep.
    await new Promise((r) => setTimeout(r, options.retryMs * (0.5 + Math.random())));
  }
  try {
    return await work();
  } finally {
    await release(store, key, token);
  }
}

async function take(store: Store, key: string, token: string, ttlSeconds: number): Promise<boolean> {
  try {
    return await store.set(key, token, { ifAbsent: true, ttlSeconds });
  } catch (err) {
    if (isUnavailable(err)) remember(key, token, ttlSeconds);
    throw err;
  }
}

function remember(key: string, token: string, ttlSeconds: number): void {
  const now = Date.now();
  for (const [k, tokens] of unanswered) {
    for (const [t, until] of tokens) if (until <= now) tokens.delete(t);
    if (tokens.size === 0) unanswered.delete(k);
  }
  const tokens = unanswered.get(key) ?? new Map<string, number>();
  tokens.set(token, now + ttlSeconds * 1000);
  unanswered.set(key, tokens);
}

/** Whether the lock is held by one of our own unanswered takes; it is ours then. */
function adopt(key: string, holder: string): boolean {
  const tokens = unanswered.get(key);
  if (!tokens?.delete(holder)) return false;
  if (tokens.size === 0) unanswered.delete(key);
  return true;
}

async function release(store: Store, key: string, token: string): Promise<void> {
  try {
    if ((await store.get(key)) === token) await store.delete(key);
  } catch {
    // The store is unreachable: the lock's own expiry frees it; the work's outcome is what matters.
  }
}
