/**
 * How much one connection may subscribe to: MAX_SUBSCRIPTIONS_PER_CONNECTION subscriptions and
 * MAX_SUBSCRIPTIONS_BYTES of them as JSON, counted on the effective list (JWT-inferred and manual
 * together, duplicates removed), which is what the hub indexes, stores (a long-poll record) and
 * sends (`gw.subscriptions_set`). Without them only the 256 KiB PUT body bounded a list, and a
 * connection could make the hub hold and send that much per change. Of them at most
 * MAX_PATTERNS_PER_CONNECTION type patterns, which cost every event a trie walk (type-trie.ts).
 */
import { isTypePattern } from '@gatehouse/cloudevents';
import type { Subscription } from './subscription.ts';

export interface SubscriptionBounds {
  maxCount: number;
  maxBytes: number;
  /** MAX_PATTERNS_PER_CONNECTION: of them, type patterns (unset: as many as maxCount). */
  maxPatterns?: number | undefined;
}

/** What is wrong with a list over a bound, naming the setting; undefined when it fits. */
export function subscriptionBoundProblem(
  subs: Subscription[],
  bounds: SubscriptionBounds,
): string | undefined {
  if (subs.length > bounds.maxCount)
    return `too many subscriptions: ${subs.length}, at most ${bounds.maxCount} per connection (MAX_SUBSCRIPTIONS_PER_CONNECTION)`;
  const patterns =
    bounds.maxPatterns === undefined ? 0 : subs.filter((s) => isTypePattern(s.eventType)).length;
  if (bounds.maxPatterns !== undefined && patterns > bounds.maxPatterns)
    return `too many type patterns: ${patterns}, at most ${bounds.maxPatterns} per connection (MAX_PATTERNS_PER_CONNECTION)`;
  const bytes = Buffer.byteLength(JSON.stringify(subs));
  if (bytes > bounds.maxBytes)
    return `subscriptions too large: ${bytes} bytes of JSON, at most ${bounds.maxBytes} per connection (MAX_SUBSCRIPTIONS_BYTES)`;
  return undefined;
}
