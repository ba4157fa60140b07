/**
 * The publishing functions of the engine, made of its outbound settings: `kafka.notification`,
 * `nats.notification` and `gatehouse.event.publish`, with the buses they share (closed at stop).
 */
import type { Auth } from '@gatehouse/auth';
import { schemaRegistryFrom } from '@gatehouse/avro';
import type { Bus } from '@gatehouse/bus';
import { submissionCheckOf } from '@gatehouse/event-submission';
import type { FunctionRegistration } from '@gatehouse/functions';
import type { Logger, Registry } from '@gatehouse/service-kit';
import type { OutboundConfig } from '../config/index.ts';
import { eventPublishFunction } from './event-publish-function.ts';
import { NotificationDestinations } from './notification-destinations.ts';
import { notificationFunctions } from './notification-functions.ts';
import { OutboundBuses } from './outbound-buses.ts';
import { OutboundMetrics } from './outbound-metrics.ts';

export interface OutboundDeps {
  /** The fan-out bus to use instead of connecting FANOUT_BUS (the embedded gateway's own). */
  fanoutBus?: Bus | undefined;
  /** Verifies tokens for SUBMISSION_CHECK=jwt_validation. */
  auth?: Pick<Auth, 'verifyAndCheck'> | undefined;
  maxJsonDepth: number;
  logger: Logger;
  registry: Registry;
}

export interface OutboundFunctions {
  functions: FunctionRegistration[];
  close(): Promise<void>;
}

/** Throws a ConfigError for settings that cannot work (schema registry files, the source claim). */
export function outboundFunctions(config: OutboundConfig, deps: OutboundDeps): OutboundFunctions {
  const buses = new OutboundBuses(config, deps.fanoutBus);
  const { logger } = deps;
  const metrics = new OutboundMetrics(deps.registry);
  const functions = [
    ...notificationFunctions({
      buses,
      registry: schemaRegistryFrom(config),
      limits: {
        maxBytes: config.FLOW_NOTIFICATION_MAX_BYTES,
        maxHeaders: config.FLOW_NOTIFICATION_MAX_HEADERS,
      },
      destinations: new NotificationDestinations(
        config.FLOW_NOTIFICATION_TOPICS,
        config.FANOUT_TOPIC,
        config.FLOW_NOTIFICATION_MAX_TOPICS,
      ),
      metrics,
      logger,
    }),
    eventPublishFunction({
      buses,
      check: submissionCheckOf(config, deps.auth, logger),
      limits: {
        maxEventBytes: config.MAX_EVENT_BYTES,
        maxEventKeys: config.MAX_EVENT_KEYS,
        maxJsonDepth: deps.maxJsonDepth,
      },
      topic: config.FANOUT_TOPIC,
      routed: config.FANOUT_ROUTING === 'interest',
      metrics,
      logger,
    }),
  ];
  return { functions, close: () => buses.close() };
}
