/**
 * An operator's change of live connections' subscriptions (the connections API's
 * `PUT /v3/connections/{id}/subscriptions` and `POST /v3/connections/subscriptions`), in the one
 * model a client's own PUT uses: effective = JWT-inferred ∪ manual, where the operator's list
 * replaces the manual part and the JWT-inferred part the connection was admitted (or last changed)
 * with stays. The list is checked as a client's is (MAX_JSON_DEPTH, extractor constraints,
 * MAX_SUBSCRIPTIONS_PER_CONNECTION and MAX_SUBSCRIPTIONS_BYTES, the same 400 texts) by the replica
 * the request reached; the bounds once more against each connection's union by the replica holding
 * it. SUBSCRIPTION_CHECK is not consulted: the operator holds the internal API token and is trusted
 * with any subscription. Nor does it count against MAX_SUBSCRIPTION_CHANGES_PER_MINUTE: that bound
 * keeps a client from busying a replica; the operator's changes are the operator's to pace.
 */
import {
  badRequestOf,
  type ResolvedSubscriptions,
  type Subscription,
  type SubscriptionBounds,
  type SubscriptionRequest,
  subscriptionBoundProblem,
  uniqueSubscriptions,
} from '../subscriptions/index.ts';

export interface OperatorChange {
  /** The operator's list checked on its own: throws the client PUT's 400 (SubscriptionRequestError). */
  parse(manual: unknown): Promise<Subscription[]>;
  /** A connection's new effective list: throws the PUT's 400 when the union is over a bound. */
  merge(jwtSubscriptions: readonly Subscription[], manual: readonly Subscription[]): Subscription[];
}

export function createOperatorChange(
  resolve: (req: SubscriptionRequest) => ResolvedSubscriptions | Promise<ResolvedSubscriptions>,
  bounds: SubscriptionBounds,
): OperatorChange {
  return {
    async parse(manual) {
      // No JWT and no body to check: the resolver validates the list alone, SUBSCRIPTION_CHECK unasked.
      const resolved = await resolve({
        kind: 'change',
        jwts: [],
        headerJwts: [],
        manual,
        authorization: undefined,
        checkBody: undefined,
      });
      return resolved.subscriptions;
    },
    merge(jwtSubscriptions, manual) {
      const subscriptions = uniqueSubscriptions([...jwtSubscriptions, ...manual]);
      const problem = subscriptionBoundProblem(subscriptions, bounds);
      if (problem) throw badRequestOf({ kind: 'change' }, problem);
      return subscriptions;
    },
  };
}
