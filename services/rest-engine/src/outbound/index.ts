// Flows that publish: records to Kafka and NATS, CloudEvents to the frontends.
export { eventPublishRoute } from './event-publish-function.ts';
export { kafkaNotificationRoute, natsNotificationRoute } from './notification-functions.ts';
export { type OutboundDeps, type OutboundFunctions, outboundFunctions } from './outbound-functions.ts';
