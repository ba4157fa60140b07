/** The push hub as its own process: connections on INBOUND_PORT, internal API on API_PORT. */
import { authConfig, startAuth } from '@gatehouse/auth';
import { busConfig, connectBus } from '@gatehouse/bus';
import { loadConfig, port, serviceMain, startUpSteps } from '@gatehouse/service-kit';
import { connectStore, storeConfig } from '@gatehouse/store';
import { pushHubConfig } from './config.ts';
import { createPushHub } from './push-hub-service.ts';

const settings = {
  ...authConfig,
  ...busConfig,
  ...storeConfig,
  ...pushHubConfig,
  INBOUND_PORT: port('public port of the connection endpoints', 4000),
};

await serviceMain('push-hub', async ({ config: common, replica, logger, registry, health }) => {
  const config = loadConfig(settings);
  const step = startUpSteps(logger);
  const store = await step(`the store (${config.STORE})`, () => connectStore(config));
  const fanoutBus = await step(`the fan-out bus (${config.FANOUT_BUS})`, () =>
    connectBus(config.FANOUT_BUS, config, {
      fetch: { minBytes: config.FANOUT_FETCH_MIN_BYTES, maxWaitMs: config.FANOUT_FETCH_MAX_WAIT },
    }),
  );
  const controlBus = await step(`the control bus (${config.CONTROL_BUS})`, () =>
    connectBus(config.CONTROL_BUS, config),
  );
  // Its own connection, only when asked for (LIFECYCLE_EVENTS_TOPIC): closed after the hub flushed it.
  const lifecycleBus =
    config.LIFECYCLE_EVENTS_TOPIC === undefined
      ? undefined
      : await step(`the lifecycle-events bus (${config.LIFECYCLE_EVENTS_BUS})`, () =>
          connectBus(config.LIFECYCLE_EVENTS_BUS, config),
        );
  health.addCheck('store', () => store.ping());
  health.addCheck('control-bus', () => controlBus.ping());
  const auth = await step('the JWT keys', () => startAuth(config, store, logger));
  const hub = createPushHub(config, {
    fanoutBus,
    controlBus,
    store,
    auth,
    replica,
    logger,
    registry,
    health,
    drainTimeoutMs: common.SHUTDOWN_DRAIN_TIMEOUT_MS,
    maxJsonDepth: common.MAX_JSON_DEPTH,
    maxHeaderValueLength: common.MAX_HEADER_VALUE_LENGTH,
    ...(lifecycleBus && { lifecycleBus }),
  });
  return {
    services: [hub],
    publicPort: config.INBOUND_PORT,
    closeables: [auth, fanoutBus, controlBus, store, ...(lifecycleBus ? [lifecycleBus] : [])],
  };
});
