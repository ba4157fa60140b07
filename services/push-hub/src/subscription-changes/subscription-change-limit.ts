/**
 * MAX_SUBSCRIPTION_CHANGES_PER_MINUTE: how often one connection's subscriptions may be changed
 * (`PUT …/subscriptions`), counted in the shared store, since each PUT may reach another replica. A
 * change re-indexes the connection and sends it its list again (a long-poll one writes its record),
 * so without a bound one connection could keep a replica busy. Every PUT for the connection counts,
 * refused ones too: the JWT and SUBSCRIPTION_CHECK work it asks for is what the bound saves.
 */
import type { Store } from '@gatehouse/store';
import { createSlidingWindow } from '../limits/index.ts';
import { SubscriptionRequestError } from '../subscriptions/index.ts';

/** Undefined when the connection may change its subscriptions now, else the 429 to answer. */
export type SubscriptionChangeLimit = (connectionId: string) => Promise<SubscriptionRequestError | undefined>;

export function createSubscriptionChangeLimit(
  store: Store,
  maxPerMinute: number,
  now: () => number = Date.now,
): SubscriptionChangeLimit {
  const take = createSlidingWindow(store, now);
  return async (connectionId) => {
    const taken = await take(`subscription-changes:${connectionId}`, maxPerMinute);
    if (taken.ok) return undefined;
    return new SubscriptionRequestError(
      429,
      'rate_limited',
      `Too many subscription changes for this connection: at most ${maxPerMinute} per minute (MAX_SUBSCRIPTION_CHANGES_PER_MINUTE).`,
      undefined,
      { 'retry-after': String(taken.retryAfterSeconds) },
    );
  };
}
