export type { BackoffOptions } from './backoff.ts';
export {
  type AckOptions,
  type ConnectionCode,
  type ConnectionState,
  Gatehouse,
  type GatehouseEvents,
  type GatehouseOptions,
  type Resync,
  type ResyncReason,
} from './gatehouse.ts';
export { GatehouseError, type GatehouseErrorCode } from './gatehouse-error.ts';
export { SubscriptionError } from './subscription-error.ts';
export type { TransportName } from './transports/transport.ts';
export { matchesType } from './type-pattern.ts';
export {
  type CloudEvent,
  type EventTypes,
  extensionOf,
  type HistoryOptions,
  type HistoryPage,
  type Presence,
  type PresenceChange,
  type Subscription,
  type TypedCloudEvent,
} from './types.ts';
