/** The lifecycle events of a replica from its settings; undefined when LIFECYCLE_EVENTS_TOPIC is unset (off). */
import type { Bus } from '@gatehouse/bus';
import { type ConfigOf, ConfigError, type Logger, type Registry } from '@gatehouse/service-kit';
import type { pushHubConfig } from '../config.ts';
import { LifecycleEvents } from './lifecycle-events.ts';
import { LifecycleMetrics } from './lifecycle-metrics.ts';
import { LifecycleProducer } from './lifecycle-producer.ts';

export function createLifecycleEvents(
  config: ConfigOf<typeof pushHubConfig>,
  deps: { bus: Bus; replica: string; registry: Registry; logger: Logger },
): LifecycleEvents | undefined {
  const topic = config.LIFECYCLE_EVENTS_TOPIC;
  if (topic === undefined) return undefined;
  // The hub drops every gw.* event it reads from its own stream: there they would be lost.
  if (topic === config.FANOUT_TOPIC)
    throw new ConfigError(['LIFECYCLE_EVENTS_TOPIC: must not be the fan-out topic (FANOUT_TOPIC)']);
  const producer = new LifecycleProducer({
    bus: deps.bus,
    topic,
    batchSize: config.LIFECYCLE_EVENTS_BATCH_SIZE,
    flushIntervalMs: config.LIFECYCLE_EVENTS_FLUSH_INTERVAL,
    maxBuffer: config.LIFECYCLE_EVENTS_MAX_BUFFER,
    maxBufferBytes: config.LIFECYCLE_EVENTS_MAX_BUFFER_BYTES,
    metrics: new LifecycleMetrics(deps.registry),
    logger: deps.logger,
  });
  return new LifecycleEvents(deps.replica, producer);
}
