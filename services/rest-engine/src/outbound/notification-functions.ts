/**
 * `kafka.notification` and `nats.notification`: a flow task publishes one record (Mercury's
 * minimalist-kafka `kafka.notification`; notification-message.ts for the input). Kafka with a
 * `schema` writes the body Avro-encoded under that registry subject's latest schema (the Confluent
 * wire format, `content-type: avro/binary`), as the proxy's Avro endpoints do; the registry is asked
 * before anything is produced, so a registry outage sends nothing. Resolves `{ topic, position }`
 * once the broker took the record; fails with a flow exception (outbound-failure.ts). A topic
 * outside FLOW_NOTIFICATION_TOPICS, or one of the gateway's own, is 403 before any broker is asked
 * (notification-destinations.ts).
 */
import { avroContentType, type SchemaRegistryClient } from '@gatehouse/avro';
import type { Bus } from '@gatehouse/bus';
import { AppException, defineFunction, type FunctionRegistration, type TaskBody } from '@gatehouse/functions';
import type { Logger } from '@gatehouse/service-kit';
import {
  kafkaNotification,
  type Notification,
  type NotificationLimits,
  natsNotification,
} from './notification-message.ts';
import { AvroNotConfiguredError, flowExceptionOf } from './outbound-failure.ts';
import type { OutboundBuses } from './outbound-buses.ts';
import type { NotificationDestinations } from './notification-destinations.ts';
import type { OutboundMetrics } from './outbound-metrics.ts';

export const kafkaNotificationRoute = 'kafka.notification';
export const natsNotificationRoute = 'nats.notification';

export interface NotificationDeps {
  buses: OutboundBuses;
  registry: SchemaRegistryClient | undefined;
  limits: NotificationLimits;
  /** FLOW_NOTIFICATION_TOPICS and the names no flow may publish to. */
  destinations: NotificationDestinations;
  metrics: OutboundMetrics;
  logger: Logger;
}

export function notificationFunctions(deps: NotificationDeps): FunctionRegistration[] {
  return [
    notificationFunction(kafkaNotificationRoute, kafkaNotification, () => deps.buses.kafka(), deps),
    notificationFunction(natsNotificationRoute, natsNotification, () => deps.buses.nats(), deps),
  ];
}

function notificationFunction(
  route: string,
  read: (input: unknown, limits: NotificationLimits) => Notification,
  bus: () => Promise<Bus>,
  deps: NotificationDeps,
): FunctionRegistration {
  return defineFunction<TaskBody>({
    route,
    input: 'map',
    handleEvent: async (_headers, input) => {
      try {
        const notification = read(input, deps.limits);
        const refused = deps.destinations.problem(notification.topic);
        if (refused !== undefined) throw new AppException(403, `${route}: ${refused}`);
        const message =
          notification.schema === undefined ? notification.message : await avro(notification, deps);
        const position = await (await bus()).publish(notification.topic, message);
        deps.destinations.published(notification.topic);
        deps.metrics.count(route, 200);
        return { topic: notification.topic, position };
      } catch (err) {
        const exception = flowExceptionOf(err, route, deps.logger);
        deps.metrics.count(route, exception.status);
        throw exception;
      }
    },
  });
}

async function avro(notification: Notification, deps: NotificationDeps) {
  if (deps.registry === undefined)
    throw new AvroNotConfiguredError('Avro (schema) needs KAFKA_SCHEMA_REGISTRY_HOST on this engine');
  const value = await deps.registry.encode(notification.schema!, notification.body ?? null);
  return {
    ...notification.message,
    value,
    headers: { ...notification.message.headers, 'content-type': avroContentType },
  };
}
