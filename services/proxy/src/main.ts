/**
 * The proxy as its own process: the reverse proxy on INBOUND_PORT, `/v2|v3/apis` and
 * `/v1|v2|v3/responses` on API_PORT. Kafka, Kinesis and NATS are connected only when configured.
 */
import { authConfig, startAuth } from '@gatehouse/auth';
import { checkSchemaRegistry, schemaRegistryFrom } from '@gatehouse/avro';
import { type Bus, busConfig, connectBus, natsSecurityOptions } from '@gatehouse/bus';
import { ConfigError, loadConfig, port, serviceMain } from '@gatehouse/service-kit';
import { connectStore, storeConfig } from '@gatehouse/store';
import { proxyConfig } from './config.ts';
import { loadProxyConfig, useEnvScope } from './definitions/index.ts';
import { createProxy } from './proxy-service.ts';
import { checkRequestLogSchema } from './edge/index.ts';
import { TargetAllowList } from './forwarding/index.ts';

const settings = {
  ...authConfig,
  ...busConfig,
  ...storeConfig,
  ...proxyConfig,
  INBOUND_PORT: port('public port of the reverse proxy', 4000),
};

await serviceMain('proxy', async ({ config: common, replica, logger, registry, health }) => {
  const config = loadConfig(settings);
  const initialApis = loadProxyConfig(
    config.PROXY_CONFIG_FILE,
    useEnvScope(process.env, config.PROXY_USE_ENV_ALLOWED),
    new TargetAllowList(config.PROXY_TARGET_ALLOW),
    common.MAX_JSON_DEPTH,
  );
  if (config.PROXY_KINESIS_RESPONSE_STREAMS.length > 0 && !config.PROXY_KINESIS_ENABLED)
    throw new ConfigError(['PROXY_KINESIS_RESPONSE_STREAMS: needs PROXY_KINESIS_ENABLED=true']);
  const schemaRegistry = schemaRegistryFrom(config);
  await checkSchemaRegistry(schemaRegistry, logger);
  const store = await connectStore(config);
  const controlBus = await connectBus(config.CONTROL_BUS, config);
  const buses: Bus[] = [controlBus];
  const kafka = config.KAFKA_BROKERS.length > 0 ? await connectBus('kafka', config) : undefined;
  const kinesis = config.PROXY_KINESIS_ENABLED
    ? await connectBus('kinesis', config, { leaseStore: store })
    : undefined;
  for (const bus of [kafka, kinesis]) if (bus !== undefined) buses.push(bus);
  const nats =
    config.NATS_SERVERS.length > 0
      ? await (await import('./nats/index.ts')).NatsTarget.connect(
          config.NATS_SERVERS,
          'gatehouse-proxy',
          natsSecurityOptions(config),
        )
      : undefined;
  health.addCheck('control-bus', () => controlBus.ping());
  if (kafka) health.addCheck('kafka', () => kafka.ping());
  if (nats) health.addCheck('nats', () => nats.ping());
  await checkRequestLogSchema({ subject: config.KAFKA_LOG_SCHEMA, registry: schemaRegistry });
  const auth = await startAuth(config, store, logger);
  const proxy = createProxy(config, {
    store,
    auth,
    controlBus,
    kafka,
    kinesis,
    nats,
    initialApis,
    replica,
    logger,
    registry,
    schemaRegistry,
    health,
    drainTimeoutMs: common.SHUTDOWN_DRAIN_TIMEOUT_MS,
    maxJsonDepth: common.MAX_JSON_DEPTH,
    trustedProxies: common.TRUSTED_PROXIES,
  });
  return {
    services: [proxy],
    publicPort: config.INBOUND_PORT,
    closeables: [auth, ...(nats ? [nats] : []), ...buses, store],
  };
});
