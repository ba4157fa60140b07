/**
 * The publisher as its own process: POST /_gw/v1/events on INBOUND_PORT, /v2|v3/messages and
 * /messages on API_PORT, and the source consumers configured by KAFKA_*, NATS_* and KINESIS_*.
 */
import { authConfig, startAuth } from '@gatehouse/auth';
import { checkSchemaRegistry, schemaRegistryFrom } from '@gatehouse/avro';
import { type Bus, busConfig, connectBus } from '@gatehouse/bus';
import { loadConfig, port, serviceMain } from '@gatehouse/service-kit';
import { connectStore, storeConfig } from '@gatehouse/store';
import { publisherConfig } from './config.ts';
import { createPublisher } from './publisher-service.ts';
import type { SourceSpec } from './source-consumers.ts';

const settings = {
  ...authConfig,
  ...busConfig,
  ...storeConfig,
  ...publisherConfig,
  INBOUND_PORT: port('public port of POST /_gw/v1/events', 4000),
};

await serviceMain('publisher', async ({ config: common, logger, registry, health }) => {
  const config = loadConfig(settings);
  const schemaRegistry = schemaRegistryFrom(config);
  await checkSchemaRegistry(schemaRegistry, logger);
  const store = await connectStore(config);
  const fanoutBus = await connectBus(config.FANOUT_BUS, config);
  const buses: Bus[] = [fanoutBus];
  const sources: SourceSpec[] = [];
  if (config.KAFKA_BROKERS.length > 0 && config.KAFKA_SOURCE_TOPICS.length > 0) {
    const bus = await connectBus('kafka', config);
    buses.push(bus);
    sources.push({ bus, topics: config.KAFKA_SOURCE_TOPICS, group: config.KAFKATOFILTER_KAFKA_GROUP_ID });
  }
  if (config.NATS_SERVERS.length > 0 && config.NATS_SOURCE_TOPICS.length > 0) {
    const bus = await connectBus('nats', config);
    buses.push(bus);
    sources.push({ bus, topics: config.NATS_SOURCE_TOPICS, group: config.NATSTOFILTER_QUEUE_GROUP });
  }
  if (config.KINESIS_ENABLED) {
    const bus = await connectBus('kinesis', config, { leaseStore: store });
    buses.push(bus);
    sources.push({ bus, topics: [config.KINESIS_STREAM], group: config.KINESIS_APP_NAME });
  }
  // The store answers the blacklist (SUBMISSION_CHECK=jwt_validation) and keeps Kinesis leases:
  // while it is down those cannot work, so the replica is not ready then.
  if (config.SUBMISSION_CHECK === 'jwt_validation' || config.KINESIS_ENABLED)
    health.addCheck('store', () => store.ping());
  const auth = await startAuth(config, store, logger);
  const publisher = createPublisher(config, {
    fanoutBus,
    // Also the duplicate window's, which is skipped while the store is down (duplicate-window.ts).
    store,
    sources,
    auth,
    logger,
    registry,
    schemaRegistry,
    health,
    maxJsonDepth: common.MAX_JSON_DEPTH,
  });
  return { services: [publisher], publicPort: config.INBOUND_PORT, closeables: [auth, ...buses, store] };
});
