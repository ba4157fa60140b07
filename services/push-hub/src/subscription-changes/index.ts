// Changing a connection's subscriptions after the connect: `PUT …/subscriptions` and its rate limit.
export { createSubscriptionChangeLimit } from './subscription-change-limit.ts';
export { createSubscriptionsEndpoint, type SubscriptionChange } from './subscriptions-endpoint.ts';
