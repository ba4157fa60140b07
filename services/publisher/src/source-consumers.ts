/**
 * Consumers of the source topics (Kafka, NATS, Kinesis): every replica joins the same consumer group
 * per source, so the partitions / messages are shared among replicas and each source message is
 * taken in once. Each message becomes a CloudEvent on the fan-out stream; a malformed one (nested
 * deeper than MAX_JSON_DEPTH too) is counted and logged, never fatal to the consumer. So is one in
 * the gateway's own namespace (a `gw.…` type or the source `gatehouse`, gateway-namespace.ts in
 * @gatehouse/cloudevents): whoever can write to a source topic is a producer, and a producer's
 * `gw.session_killed` would close every subscriber. While tracing, handling a message is a CONSUMER span
 * under the context the event carries (the CloudEvents distributed-tracing extension).
 *
 * Kafka messages with Avro values (the Confluent wire format, see @gatehouse/avro) are decoded through
 * the schema registry first. While the registry is unavailable the consumer retries, holding its
 * partition, as it does for the fan-out stream; a schema id the registry does not know makes the
 * message malformed.
 *
 * At least once: a source message counts as handled (offset committed, acknowledged, checkpointed)
 * only once the fan-out stream has accepted its event. While the stream is unavailable the consumer
 * retries, holding its partition. When the publisher stops, a message whose event was not accepted
 * is left to the group (NotHandledError): another replica, or this one after a restart, takes it in
 * again. An event whose publish was cut short by the stop may have reached the stream after all; it
 * then comes twice, with the same id both times (see source-message.ts), and the hubs drop the
 * second one.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { avroToJsonMessage, type SchemaRegistryClient } from '@gatehouse/avro';
import { type Bus, type Message, NotHandledError, type Subscription } from '@gatehouse/bus';
import { type CloudEvent, gatewayNamespaceProblems, inGatewayNamespace } from '@gatehouse/cloudevents';
import { assertJsonDepth, type Logger, unavailabilityOf } from '@gatehouse/service-kit';
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

export interface SourceConsumers {
  /** Stops taking in messages; those in hand are finished or left to the group, then it resolves. */
  close(): Promise<void>;
}

/** How long a publish already under way may still finish once the publisher stops. */
const STOP_GRACE_MS = 1000;

export async function startSourceConsumers(
  sources: SourceSpec[],
  deps: {
    producer: FanoutProducer;
    metrics: PublisherMetrics;
    logger: Logger;
    wrappedType: string | undefined;
    /** Reads Avro messages of Kafka sources (KAFKA_SCHEMA_REGISTRY_HOST); absent: Avro is off. */
    schemaRegistry?: SchemaRegistryClient | undefined;
    /** MAX_JSON_DEPTH: an event nested deeper is malformed. */
    maxJsonDepth: number;
  },
): Promise<SourceConsumers> {
  const stopping = new AbortController();
  const subs: Subscription[] = [];
  for (const { bus, topics, group } of sources) {
    for (const topic of topics) {
      const sub = await bus.subscribe(
        topic,
        async (message) => {
          if (stopping.signal.aborted) throw new NotHandledError('the publisher is stopping');
          const receivedAt = process.hrtime.bigint();
          let event: ReturnType<typeof sourceMessageToEvent>;
          try {
            const read =
              bus.kind === 'kafka' && deps.schemaRegistry !== undefined
                ? await readAvroUntilAvailable(message, deps.schemaRegistry, deps.logger, stopping.signal)
                : message;
            event = sourceMessageToEvent(read, bus.kind, deps.wrappedType);
            assertJsonDepth(event, deps.maxJsonDepth, 'the event');
          } catch (err) {
            if (err instanceof NotHandledError) throw err;
            deps.metrics.consumedFailed(bus.kind, topic, 'malformed');
            deps.logger.warn(
              { err: (err as Error).message, source: bus.kind, topic, position: message.position },
              'dropped a malformed source message',
            );
            return;
          }
          if (inGatewayNamespace(event)) return dropReserved(event, message, bus.kind, topic, deps);
          const forward = () =>
            publishUntilAccepted(
              () => deps.producer.publish(event, { source: bus.kind, topic, receivedAt }),
              deps.logger,
              stopping.signal,
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
  return {
    async close() {
      stopping.abort();
      await Promise.all(subs.map((sub) => sub.close()));
    },
  };
}

/** A forged gateway event from a source topic: counted (reason `reserved`), logged, acknowledged. */
function dropReserved(
  event: CloudEvent,
  message: Message,
  kind: string,
  topic: string,
  deps: { metrics: PublisherMetrics; logger: Logger },
): void {
  deps.metrics.consumedFailed(kind, topic, 'reserved');
  deps.logger.warn(
    {
      problems: gatewayNamespaceProblems(event).map((p) => p.message),
      source: kind,
      topic,
      position: message.position,
    },
    "dropped a source message in the gateway's own event namespace",
  );
}

/**
 * A source message is only done once the fan-out stream has it: while the stream is unavailable the
 * consumer retries (holding its partition, so order is kept) instead of acknowledging a lost event.
 * Once `stop` fires there is no further attempt, and the one under way gets STOP_GRACE_MS; a message
 * whose event was not accepted by then throws NotHandledError, so the group delivers it again.
 */
async function publishUntilAccepted(publish: () => Promise<unknown>, logger: Logger, stop: AbortSignal) {
  for (let attempt = 0; !stop.aborted; attempt++) {
    try {
      await settledOrGivenUp(publish(), stop);
      return;
    } catch (err) {
      if (stop.aborted) throw notAccepted(err);
      if (attempt === 0) logger.warn({ err }, 'fan-out stream unavailable; retrying the source message');
      await delay(Math.min(5000, 100 * 2 ** attempt), undefined, { signal: stop }).catch(() => {});
    }
  }
  throw notAccepted(undefined);
}

/** The message with its Avro value read as JSON, retrying while the schema registry is unavailable. */
async function readAvroUntilAvailable(
  message: Message,
  registry: SchemaRegistryClient,
  logger: Logger,
  stop: AbortSignal,
): Promise<Message> {
  for (let attempt = 0; !stop.aborted; attempt++) {
    try {
      return await avroToJsonMessage(message, registry);
    } catch (err) {
      if (!unavailabilityOf(err)) throw err;
      if (attempt === 0) logger.warn({ err }, 'schema registry unavailable; retrying the source message');
      await delay(Math.min(5000, 100 * 2 ** attempt), undefined, { signal: stop }).catch(() => {});
    }
  }
  throw new NotHandledError('stopped before the schema registry could read the message');
}

/** The publish's own outcome, unless the stop comes first and the publish outlasts the grace. */
function settledOrGivenUp<T>(publish: Promise<T>, stop: AbortSignal): Promise<T> {
  if (stop.aborted) return publish;
  return new Promise<T>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const onStop = () => {
      timer = setTimeout(() => reject(notAccepted(undefined)), STOP_GRACE_MS);
    };
    stop.addEventListener('abort', onStop, { once: true });
    publish.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      stop.removeEventListener('abort', onStop);
    });
  });
}

function notAccepted(cause: unknown): NotHandledError {
  return new NotHandledError('stopped before the fan-out stream accepted the event', { cause });
}
