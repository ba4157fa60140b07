// Subscriptions: the model, extractor fields, the index that matches events, resolving a client's list.
export {
  type ExtractorConfig,
  ExtractorConfigError,
  loadExtractorConfig,
  parseExtractorConfig,
} from './extractor-config.ts';
export { type PatternLimits, SubscriptionIndex, type TypeInterest } from './subscription-index.ts';
export { PatternBudget } from './pattern-budget.ts';
export { SharedSubscriptionLists } from './shared-subscription-lists.ts';
export { checkTypesClaimMode, claimAllowsTypes, type TypesClaim, typesClaimField } from './types-claim.ts';
export { hasPattern, type TypeFilter, typeFilterOf } from './type-filter.ts';
export {
  authorizationProblem,
  badRequest,
  badRequestOf,
  createSubscriptionResolver,
  refusalOf,
  type ResolvedSubscriptions,
  type SubscriptionRequest,
  SubscriptionRequestError,
} from './subscription-request.ts';
export {
  canonicalJson,
  InvalidSubscriptionError,
  parseSubscriptions,
  type Subscription,
  uniqueSubscriptions,
} from './subscription.ts';
export { type SubscriptionBounds, subscriptionBoundProblem } from './subscription-bounds.ts';
export {
  createSubscriberGet,
  type SubscriberGetAnswer,
  type SubscriberGetContext,
  type SubscriberGetDeps,
} from './subscriber-get.ts';
