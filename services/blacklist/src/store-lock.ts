/**
 * A short mutual exclusion over the shared Store, for a read-then-write that must not interleave
 * with the same sequence on another replica. It is a key set only-if-absent with an expiry (SET NX
 * PX on Redis): the holder deletes it when done, and a holder that dies mid-way blocks the others
 * for at most `ttlSeconds`. Release compares the holder's random token first, so a holder that
 * overran its expiry does not delete a lock someone else took meanwhile (the compare and the
 * delete are two commands: that overrun case is narrowed, not closed, which is fine for what the
 * lock guards here, a few milliseconds of work).
 */
import { randomUUID } from 'node:crypto';
import type { Store } from '@gatehouse/store';

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
  const token = randomUUID();
  const deadline = Date.now() + options.waitMs;
  while (!(await store.set(key, token, { ifAbsent: true, ttlSeconds: options.ttlSeconds }))) {
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

async function release(store: Store, key: string, token: string): Promise<void> {
  try {
    if ((await store.get(key)) === token) await store.delete(key);
  } catch {
    // The store is unreachable: the lock's own expiry frees it; the work's outcome is what matters.
  }
}
