/**
 * MAX_TYPE_PATTERNS: the distinct type patterns one replica holds, over its indexes (connections
 * and waiting long polls). What an event costs to match grows with the patterns that could match it
 * (type-trie.ts), so the replica bounds them as it bounds connections: a connect or change that
 * would add patterns past it is refused 503 with Retry-After (the replica is full, not the client
 * wrong), and the patterns already held keep being served. Each pattern is counted once however
 * many connections name it: a thousand clients of `com.example.orders.*` cost one.
 */
import { SubscriptionRequestError } from './subscription-request.ts';

export class PatternBudget {
  readonly max: number;
  /** Pattern → how many indexes hold it. */
  private readonly held = new Map<string, number>();

  constructor(max: number) {
    this.max = max;
  }

  get size(): number {
    return this.held.size;
  }

  /** Throws the 503 when the patterns of `wanted` not held yet would take the replica past `max`. */
  admit(wanted: Iterable<string>): void {
    const added = new Set<string>();
    for (const pattern of wanted) if (!this.held.has(pattern)) added.add(pattern);
    if (added.size === 0 || this.held.size + added.size <= this.max) return;
    throw new SubscriptionRequestError(
      503,
      'at_capacity',
      `This replica holds as many type patterns as it may (${this.max}, MAX_TYPE_PATTERNS); retry later or subscribe to event types by name.`,
      undefined,
      { 'retry-after': '5' },
    );
  }

  /** An index holds `pattern` now. */
  add(pattern: string): void {
    this.held.set(pattern, (this.held.get(pattern) ?? 0) + 1);
  }

  /** An index no longer holds `pattern`. */
  release(pattern: string): void {
    const n = (this.held.get(pattern) ?? 1) - 1;
    if (n > 0) this.held.set(pattern, n);
    else this.held.delete(pattern);
  }
}
