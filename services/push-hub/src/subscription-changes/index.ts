// Changing a connection's subscriptions after the connect: a client's `PUT …/subscriptions` and its
// rate limit, and an operator's change through the connections API.
export { createSubscriptionChangeLimit } from './subscription-change-limit.ts';
export {
  createSubscriptionsEndpoint,
  readSubscriptionsJson,
  type SubscriptionChange,
} from './subscriptions-endpoint.ts';
export { createOperatorChange, type OperatorChange } from './operator-change.ts';
