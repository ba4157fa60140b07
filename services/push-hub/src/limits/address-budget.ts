/**
 * MAX_CONNECTIONS_PER_IP_PER_MINUTE: connect attempts one client address may make per minute on
 * this replica, every transport together (socket.io's engine handshakes too), so one client cannot
 * spend everyone's connection budget. It is the first check a connect meets: local, no store, so a
 * client past it costs no JWT check, no store round trip and no external check.
 *
 * A token bucket per address, refilled evenly over the minute. IPv6 clients are counted per /64
 * (address-key.ts). The buckets are bounded: a full one is forgotten (it is the
 * same as none), and past `maxAddresses` the least recently used go first.
 */
import { addressKey } from '../auth/index.ts';

export interface AddressBudgetOptions {
  perMinute: number;
  maxAddresses?: number;
  now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
}

const TAKEN: { ok: true } = Object.freeze({ ok: true });

export class AddressBudget {
  private readonly perMinute: number;
  private readonly maxAddresses: number;
  private readonly now: () => number;
  private readonly buckets = new Map<string, Bucket>();

  constructor(options: AddressBudgetOptions) {
    this.perMinute = options.perMinute;
    this.maxAddresses = options.maxAddresses ?? 100_000;
    this.now = options.now ?? Date.now;
  }

  /** Takes one attempt for the address; false (and the seconds until one is back) when it has none left. */
  take(address: string): { ok: true } | { ok: false; retryAfterSeconds: number } {
    const key = addressKey(address);
    const t = this.now();
    const held = this.buckets.get(key);
    const tokens = held
      ? Math.min(this.perMinute, held.tokens + ((t - held.at) / 60_000) * this.perMinute)
      : this.perMinute;
    if (tokens < 1) {
      const retryAfterSeconds = Math.max(1, Math.ceil(((1 - tokens) * 60) / this.perMinute));
      return { ok: false, retryAfterSeconds };
    }
    // Re-inserted, so the map's order is least recently used first; the bucket is reused (every
    // connect passes here: an object and an answer of their own each were garbage of every connect).
    const bucket = held ?? { tokens, at: t };
    bucket.tokens = tokens - 1;
    bucket.at = t;
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    if (this.buckets.size > this.maxAddresses) this.evict(t);
    return TAKEN;
  }

  get size(): number {
    return this.buckets.size;
  }

  /** Forgets refilled buckets, then the least recently used until the bound holds. */
  private evict(t: number): void {
    for (const [key, b] of this.buckets)
      if (b.tokens + ((t - b.at) / 60_000) * this.perMinute >= this.perMinute) this.buckets.delete(key);
    // Down to 90 %, so a full map is not scanned again at the next new address.
    for (const key of this.buckets.keys()) {
      if (this.buckets.size <= this.maxAddresses * 0.9) break;
      this.buckets.delete(key);
    }
  }
}
