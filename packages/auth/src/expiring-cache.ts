/**
 * A bounded map whose entries carry their own expiry time. Used for verified tokens and blacklist
 * answers, where a hit must cost as little as possible: a hit only sets a "used" flag, and eviction
 * (when full) uses CLOCK, the second-chance approximation of LRU, instead of reordering on every hit.
 */

interface Slot<V> {
  value: V;
  expiresAt: number;
  used: boolean;
}

export class ExpiringCache<K, V> {
  readonly capacity: number;
  private readonly entries = new Map<K, Slot<V>>();

  constructor(capacity: number) {
    this.capacity = Math.max(0, Math.floor(capacity));
  }

  get size(): number {
    return this.entries.size;
  }

  /** The live value, or undefined when absent or expired at `now` (ms). */
  get(key: K, now: number): V | undefined {
    const slot = this.entries.get(key);
    if (slot === undefined) return undefined;
    if (slot.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    slot.used = true;
    return slot.value;
  }

  /** Stores `value` until `expiresAt` (ms); a no-op for capacity 0 or an entry already expired. */
  set(key: K, value: V, expiresAt: number, now: number): void {
    if (this.capacity === 0 || expiresAt <= now) return;
    const existing = this.entries.get(key);
    if (existing === undefined && this.entries.size >= this.capacity) this.evictOne(now);
    this.entries.set(key, { value, expiresAt, used: false });
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Drops the oldest entry that is expired or was not used since it was last passed over. */
  private evictOne(now: number): void {
    // Each pass clears the "used" flags it skips, so the loop ends within two rounds.
    for (const [key, slot] of this.entries) {
      this.entries.delete(key);
      if (slot.expiresAt <= now || !slot.used) return;
      slot.used = false;
      this.entries.set(key, slot);
    }
  }
}
