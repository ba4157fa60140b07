// Lifecycle events on the bus (LIFECYCLE_EVENTS_TOPIC): opened, closed (with reason), subscriptions changed.
export {
  type ChangeCause,
  CONNECTION_CLOSED,
  CONNECTION_OPENED,
  type ConnectionSnapshot,
  type EndReason,
  lifecycleSource,
  SUBSCRIPTIONS_CHANGED,
} from './lifecycle-event.ts';
export { type ConnectionLifecycle, LifecycleEvents } from './lifecycle-events.ts';
export { LifecycleMetrics } from './lifecycle-metrics.ts';
export { LifecycleProducer, type LifecycleProducerOptions } from './lifecycle-producer.ts';
export { createLifecycleEvents } from './create-lifecycle-events.ts';
export { type LongPollAbout, LongPollEnds } from './long-poll-ends.ts';
