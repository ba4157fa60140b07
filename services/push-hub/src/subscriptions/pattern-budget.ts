/**
 * MAX_TYPE_PATTERNS: the distinct type patterns one replica holds, over its indexes (connections
 * and waiting long polls). What an event costs to match grows with the patterns that could match it
 * (type-trie.ts), so the replica bounds them as it bounds connections: a connect or change that
 * would add patterns past it is refused 503 with Retry-After (the replica is full, not the client
 * wrong), and the patterns already held keep being served. Each pattern is counted once however
 * many connections name it: a thousand clients of `com.example.orders.*` cost one.
 *
 * MAX_TYPE_PATTERNS_PER_ADDRESS: of them, the distinct patterns the connections of one client
 * address hold. Without it one address (its MAX_CONNECTIONS_PER_ADDRESS connections of
 * MAX_PATTERNS_PER_CONNECTION patterns each, 16,000 by default) took the whole replica's budget
 * and every other client got the 503; past it, that address alone gets a 429 with Retry-After.
 */
import { addressKey } from '../auth/index.ts';
import { SubscriptionRequestError } from './subscription-request.ts';

export class PatternBudget {
  readonly max: number;
  readonly maxPerAddress: number;
  /** Pattern → how many indexes hold it. */
  private readonly held = new Map<string, number>();
  /** Address → pattern → how many of its connections hold it. */
  private readonly byAddress = new Map<string, Map<string, number>>();

  constructor(max: number, maxPerAddress = max) {
    this.max = max;
    this.maxPerAddress = maxPerAddress;
  }

  get size(): number {
    return this.held.size;
  }

  /**
   * Throws the 503 when the patterns of `wanted` not held yet would take the replica past `max`,
   * and the 429 when those `address` does not hold yet would take it past `maxPerAddress`.
   */
  admit(wanted: Iterable<string>, address?: string): void {
    const patterns = [...wanted];
    const added = newTo(this.held, patterns);
    if (added > 0 && this.held.size + added > this.max)
      throw new SubscriptionRequestError(
        503,
        'at_capacity',
        `This replica holds as many type patterns as it may (${this.max}, MAX_TYPE_PATTERNS); retry later or subscribe to event types by name.`,
        undefined,
        { 'retry-after': '5' },
      );
    if (address === undefined) return;
    const own = this.byAddress.get(addressKey(address)) ?? new Map<string, number>();
    const addedHere = newTo(own, patterns);
    if (addedHere > 0 && own.size + addedHere > this.maxPerAddress)
      throw new SubscriptionRequestError(
        429,
        'rate_limited',
        `The connections of this address hold as many type patterns as they may (${this.maxPerAddress}, MAX_TYPE_PATTERNS_PER_ADDRESS); close some or subscribe to event types by name.`,
        undefined,
        { 'retry-after': '5' },
      );
  }

  /** An index holds `pattern` now. */
  add(pattern: string): void {
    count(this.held, pattern, 1);
  }

  /** An index no longer holds `pattern`. */
  release(pattern: string): void {
    count(this.held, pattern, -1);
  }

  /** A connection of `address` holds `patterns` now (each once). */
  holdFor(address: string, patterns: readonly string[]): void {
    if (patterns.length === 0) return;
    const key = addressKey(address);
    const own = this.byAddress.get(key) ?? new Map<string, number>();
    this.byAddress.set(key, own);
    for (const pattern of patterns) count(own, pattern, 1);
  }

  /** A connection of `address` no longer holds `patterns`. */
  releaseFor(address: string, patterns: readonly string[]): void {
    const key = addressKey(address);
    const own = this.byAddress.get(key);
    if (!own) return;
    for (const pattern of patterns) count(own, pattern, -1);
    if (own.size === 0) this.byAddress.delete(key);
  }
}

function newTo(counts: Map<string, number>, patterns: readonly string[]): number {
  return new Set(patterns.filter((p) => !counts.has(p))).size;
}

function count(counts: Map<string, number>, pattern: string, by: 1 | -1): void {
  const n = (counts.get(pattern) ?? 0) + by;
  if (n > 0) counts.set(pattern, n);
  else counts.delete(pattern);
}
