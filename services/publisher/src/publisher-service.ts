/**
 * The publisher service: takes events in over HTTP and from source topics, validates and normalises
 * them as CloudEvents, and puts them on the fan-out stream that every push-hub replica consumes.
 */
import type { Auth } from '@gatehouse/auth';
import { type SchemaRegistryClient, schemaRegistryFrom } from '@gatehouse/avro';
import type { Bus } from '@gatehouse/bus';
import { submissionCheckOf } from '@gatehouse/event-submission';
import {
  type ConfigOf,
  defaultMaxJsonDepth,
  type GatewayService,
  type Health,
  type Logger,
  type Registry,
} from '@gatehouse/service-kit';
import type { Store } from '@gatehouse/store';
import type { publisherConfig } from './config.ts';
import { DuplicateWindow } from './duplicate-window.ts';
import { createEventsEndpoint } from './events-endpoint.ts';
import { createFanoutProducer } from './fanout-producer.ts';
import { PublisherMetrics } from './publisher-metrics.ts';
import { type SourceConsumers, type SourceSpec, startSourceConsumers } from './source-consumers.ts';
import { checkWrappedTypes } from './wrapped-type.ts';

export interface PublisherDeps {
  fanoutBus: Bus;
  /** Where the duplicate window keeps the ids of accepted events (shared by the replicas). */
  store: Store;
  /** Source buses with their topics and group (built from KAFKA_*, NATS_*, KINESIS_* settings). */
  sources: SourceSpec[];
  /** Verifies tokens for SUBMISSION_CHECK=jwt_validation. */
  auth: Auth;
  logger: Logger;
  registry: Registry;
  health: Health;
  /** The registry client main.ts made and checked; absent: made from the config here. */
  schemaRegistry?: SchemaRegistryClient | undefined;
  /** MAX_JSON_DEPTH: events nested deeper are refused (400) or dropped as malformed. */
  maxJsonDepth?: number;
}

export function createPublisher(
  config: ConfigOf<typeof publisherConfig>,
  deps: PublisherDeps,
): GatewayService {
  checkWrappedTypes(
    deps.sources.flatMap((s) => s.topics),
    config.WRAPPED_EVENT_TYPE,
  );
  const logger = deps.logger.child({ service: 'publisher' });
  const check = submissionCheckOf(config, deps.auth, logger);
  const metrics = new PublisherMetrics(deps.registry);
  const producer = createFanoutProducer(
    deps.fanoutBus,
    config.FANOUT_TOPIC,
    metrics,
    config.FANOUT_ROUTING === 'interest',
  );
  const maxJsonDepth = deps.maxJsonDepth ?? defaultMaxJsonDepth;
  const endpoint = createEventsEndpoint({
    producer,
    duplicates: new DuplicateWindow(deps.store, config.EVENT_DEDUPE_WINDOW_SECONDS, logger),
    check,
    metrics,
    logger,
    cors: config.CORS_ALLOWED_ORIGINS,
    maxEventBytes: config.MAX_EVENT_BYTES,
    maxEventKeys: config.MAX_EVENT_KEYS,
    maxJsonDepth,
  });
  let consumers: SourceConsumers | undefined;

  return {
    name: 'publisher',
    public: endpoint.public,
    internal: endpoint.internal,
    async start() {
      deps.health.addCheck('fanout-bus', () => deps.fanoutBus.ping());
      for (const s of deps.sources) deps.health.addCheck(`source-${s.bus.kind}`, () => s.bus.ping());
      consumers = await startSourceConsumers(deps.sources, {
        producer,
        metrics,
        logger,
        wrappedType: config.WRAPPED_EVENT_TYPE,
        schemaRegistry: deps.schemaRegistry ?? schemaRegistryFrom(config),
        maxJsonDepth,
      });
    },
    async stop() {
      // Stop taking in source messages; one in hand is finished if the fan-out stream takes its
      // event promptly, else left uncommitted for another replica (source-consumers.ts).
      await consumers?.close();
    },
  };
}
