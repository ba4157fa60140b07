// Requests to event endpoints as CloudEvents, the credentials they may carry, and their publishers.
export {
  AvroNotConfiguredError,
  type EventPublisher,
  KafkaEventPublisher,
  KinesisEventPublisher,
} from './event-publishers.ts';
export { requestEvent } from './request-event.ts';
