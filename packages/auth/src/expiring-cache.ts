/**
 * A bounded map whose entries carry their own expiry time. Used for verified tokens and blacklist
 * answers, where a hit must cost as little as possible: a hit only sets a "used" flag, and eviction
 * (when full) uses CLOCK, the second-chance approximation of LRU, instead of reordering on every hit.
 *
 * It is bounded by entry count and, when given a `weigh` function, by the bytes those entries are
 * estimated to take: a key an attacker chooses (a token) may be large, so a count alone bounds nothing.
 */

interface Slot<V> {
  value: V;
  expiresAt: number;
  used: boolean;
  bytes: number;
}

export interface ExpiringCacheBytes<K, V> {
  /** Most bytes the entries may take together (by `weigh`). */
  maxBytes: number;
  /** Estimated memory of one entry, in bytes. */
  weigh: (key: K, value: V) => number;
}

export class ExpiringCache<K, V> {
  readonly capacity: number;
  readonly maxBytes: number;
  private readonly weigh: ((key: K, value: V) => number) | undefined;
  private readonly entries = new Map<K, Slot<V>>();
  private heldBytes = 0;

  constructor(capacity: number, bytes?: ExpiringCacheBytes<K, V>) {
    this.capacity = Math.max(0, Math.floor(capacity));
    this.maxBytes = bytes ? Math.max(0, Math.floor(bytes.maxBytes)) : Number.POSITIVE_INFINITY;
    this.weigh = bytes?.weigh;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Estimated bytes of the entries held (0 without a `weigh` function). */
  get bytes(): number {
    return this.heldBytes;
  }

  /** The live value, or undefined when absent or expired at `now` (ms). */
  get(key: K, now: number): V | undefined {
    const slot = this.entries.get(key);
    if (slot === undefined) return undefined;
    if (slot.expiresAt <= now) {
      this.remove(key, slot);
      return undefined;
    }
    slot.used = true;
    return slot.value;
  }

  /** Whether `set` could store this entry without evicting another. */
  hasRoomFor(key: K, value: V): boolean {
    const bytes = this.weigh?.(key, value) ?? 0;
    return this.entries.size < this.capacity && this.heldBytes + bytes <= this.maxBytes;
  }

  /**
   * Stores `value` until `expiresAt` (ms); a no-op for capacity 0, an entry already expired or one
   * larger than the whole byte budget.
   */
  set(key: K, value: V, expiresAt: number, now: number): void {
    if (this.capacity === 0 || expiresAt <= now) return;
    const bytes = this.weigh?.(key, value) ?? 0;
    if (bytes > this.maxBytes) return;
    const existing = this.entries.get(key);
    if (existing !== undefined) this.remove(key, existing);
    while (
      this.entries.size > 0 &&
      (this.entries.size >= this.capacity || this.heldBytes + bytes > this.maxBytes)
    )
      this.evictOne(now);
    this.entries.set(key, { value, expiresAt, used: false, bytes });
    this.heldBytes += bytes;
  }

  delete(key: K): boolean {
    const slot = this.entries.get(key);
    if (slot === undefined) return false;
    this.remove(key, slot);
    return true;
  }

  clear(): void {
    this.entries.clear();
    this.heldBytes = 0;
  }

  private remove(key: K, slot: Slot<V>): void {
    this.entries.delete(key);
    this.heldBytes -= slot.bytes;
  }

  /** Drops the oldest entry that is expired or was not used since it was last passed over. */
  private evictOne(now: number): void {
    // Each pass clears the "used" flags it skips, so the loop ends within two rounds.
    for (const [key, slot] of this.entries) {
      this.entries.delete(key);
      if (slot.expiresAt <= now || !slot.used) {
        this.heldBytes -= slot.bytes;
        return;
      }
      slot.used = false;
      this.entries.set(key, slot);
    }
  }
}
