/**
 * Key/value storage with expiry and change notifications, behind one interface with a memory and a
 * Redis adapter (both pass test/store-contract.ts). Used for the session blacklist, API
 * definitions, rate counters and anything else the services share.
 */

export interface SetOptions {
  /** Seconds until the key expires; absent means it never does. */
  ttlSeconds?: number;
  /** Only set when the key does not exist yet; `set` then returns false if it did. */
  ifAbsent?: boolean;
}

/**
 * `resync`: the watch was cut off from the backend (a reconnect) and listens again; changes made
 * meanwhile were not heard, so a listener that must not miss one re-reads what it relies on. Its
 * `key` is the watched prefix.
 */
export type ChangeKind = 'set' | 'delete' | 'expire' | 'resync';

export interface Change {
  key: string;
  kind: ChangeKind;
}

export type ChangeListener = (change: Change) => void;

export interface Store {
  readonly kind: string;
  get(key: string): Promise<string | undefined>;
  /** Returns false only when `ifAbsent` was asked and the key existed. */
  set(key: string, value: string, options?: SetOptions): Promise<boolean>;
  /**
   * Sets `key` to `value` only while it holds `expected` (`undefined`: only while it is missing),
   * atomically across every handle on the backend; returns whether it did. With `ttlSeconds` the
   * key (re)gets that expiry, without it it never expires. A forward-only value (an acknowledged
   * position) is kept by reading it, comparing, and trying again when another writer came between.
   */
  compareAndSet(
    key: string,
    expected: string | undefined,
    value: string,
    options?: { ttlSeconds?: number },
  ): Promise<boolean>;
  /** Returns whether the key existed. */
  delete(key: string): Promise<boolean>;
  exists(key: string): Promise<boolean>;
  /** Remaining lifetime in seconds (fractional), undefined for a missing key, Infinity without expiry. */
  ttl(key: string): Promise<number | undefined>;
  /**
   * Atomically adds `by` (default 1) to an integer counter and returns the new value; a counter
   * created by this call expires after `ttlSeconds` (an existing one keeps its expiry).
   */
  increment(key: string, options?: { by?: number; ttlSeconds?: number }): Promise<number>;
  /**
   * Appends to the list at `key`, keeps only its newest `maxLength` items, and (re)sets its expiry;
   * returns the list's length.
   */
  append(key: string, value: string, options?: { ttlSeconds?: number; maxLength?: number }): Promise<number>;
  /** Returns and removes every item of the list at `key`, oldest first (atomically). */
  takeAll(key: string): Promise<string[]>;
  /** Every item of the list at `key`, oldest first, without removing them. */
  list(key: string): Promise<string[]>;
  /** Removes the oldest occurrence of each of `items` from the list at `key`; returns how many went. */
  removeItems(key: string, items: string[]): Promise<number>;
  /** Gives an existing key a new expiry; false when the key does not exist. */
  touch(key: string, ttlSeconds: number): Promise<boolean>;
  /** Keys starting with `prefix` (no order promised). */
  keys(prefix: string): Promise<string[]>;
  /**
   * Calls `listener` for every change of a key starting with `prefix`, made through any Store
   * instance on the same backend (so every replica hears it), and with a `resync` change each time
   * the watch listens again after it was cut off. Resolves once listening. The changes of one key
   * come in the order they were made; those of different keys may come in another order (on a
   * Redis Cluster each key's changes are announced by the node that holds it).
   */
  watch(prefix: string, listener: ChangeListener): Promise<() => Promise<void>>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export class StoreError extends Error {
  override readonly name: string = 'StoreError';
}

/**
 * The store could not be reached (connection down, timed out, server loading or failing over, or
 * this handle already closed by a shutting-down service while a request was still in flight). The
 * services answer 503 with Retry-After for it (service-kit's dependency-unavailable.ts), never 400 or
 * 500; other StoreErrors are refusals of a command the store did reach.
 */
export class StoreUnavailableError extends StoreError {
  override readonly name: string = 'StoreUnavailableError';
  readonly unavailable = true as const;
  readonly dependency = 'store';
}
