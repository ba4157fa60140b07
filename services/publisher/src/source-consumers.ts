/**
 * Consumers of the source topics (Kafka, NATS, Kinesis): every replica joins the same consumer group
 * per source, so the partitions / messages are shared among replicas and each source message is
 * taken in once. Each message becomes a CloudEvent on the fan-out stream; a malformed one is counted
 * and logged, never fatal to the consumer. While tracing, handling a message is a CONSUMER span
 * under the context the event carries (the CloudEvents distributed-tracing extension).
 */
import type { Bus, Subscription } from '@gatehouse/bus';
import type { Logger } from '@gatehouse/service-kit';
import {
  endSpan,
  gatewayTracer,
  isTracingActive,
  readTraceContextFromEvent,
  startConsumerSpan,
  withActiveSpan,
} from '@gatehouse/tracing';
import type { FanoutProducer } from './fanout-producer.ts';
import type { PublisherMetrics } from './publisher-metrics.ts';
import { sourceMessageToEvent } from './source-message.ts';

const tracer = gatewayTracer('publisher');

export interface SourceSpec {
  bus: Bus;
  topics: string[];
  group: string;
}

export async function startSourceConsumers(
  sources: SourceSpec[],
  deps: {
    producer: FanoutProducer;
    metrics: PublisherMetrics;
    logger: Logger;
    wrappedType: string | undefined;
  },
): Promise<Subscription[]> {
  const subs: Subscription[] = [];
  let closed = false;
  for (const { bus, topics, group } of sources) {
    for (const topic of topics) {
      const sub = await bus.subscribe(
        topic,
        async (message) => {
          const receivedAt = process.hrtime.bigint();
          let event: ReturnType<typeof sourceMessageToEvent>;
          try {
            event = sourceMessageToEvent(message, bus.kind, deps.wrappedType);
          } catch (err) {
            deps.metrics.consumedFailed(bus.kind, topic, 'malformed');
            deps.logger.warn(
              { err: (err as Error).message, source: bus.kind, topic, position: message.position },
              'dropped a malformed source message',
            );
            return;
          }
          const forward = () =>
            publishUntilAccepted(
              () => deps.producer.publish(event, { source: bus.kind, topic, receivedAt }),
              deps.logger,
              () => closed,
            );
          if (!isTracingActive()) return forward();
          const span = startConsumerSpan(
            tracer,
            { system: bus.kind, destination: topic, operation: 'process', consumerGroup: group, event },
            readTraceContextFromEvent(event),
          );
          try {
            await withActiveSpan(span, forward);
            endSpan(span);
          } catch (err) {
            endSpan(span, err);
            throw err;
          }
        },
        {
          group,
          onError: (err, message) =>
            deps.logger.error(
              { err, source: bus.kind, topic, position: message?.position },
              'source message not forwarded',
            ),
        },
      );
      subs.push(sub);
      deps.logger.info({ source: bus.kind, topic, group }, 'consuming source topic');
    }
  }
  return subs.map((sub) => ({
    close: async () => {
      closed = true;
      await sub.close();
    },
  }));
}

/**
 * A source message is only done once the fan-out stream has it: while the stream is unavailable the
 * consumer retries (holding its partition, so order is kept) instead of acknowledging a lost event.
 */
async function publishUntilAccepted(publish: () => Promise<unknown>, logger: Logger, stopped: () => boolean) {
  for (let attempt = 0; ; attempt++) {
    try {
      await publish();
      return;
    } catch (err) {
      if (stopped()) throw err;
      if (attempt === 0) logger.warn({ err }, 'fan-out stream unavailable; retrying the source message');
      await new Promise((r) => setTimeout(r, Math.min(5000, 100 * 2 ** attempt)));
    }
  }
}
