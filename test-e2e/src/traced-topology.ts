/**
 * The services as separate processes exporting their spans to the real trace backend
 * (tools/deps.sh `traces`): a proxy with two APIs (POST /traced/events → a Kafka topic, /api/… → the
 * REST engine), the REST engine with the example app, a publisher consuming that Kafka topic, and two
 * push-hub replicas on a Kafka fan-out stream. The proxy logs in Google Cloud Logging's format with
 * a project id, and logs every request, for the log-correlation checks.
 */
import {
  gatewayEnv,
  dependencyAddress,
  freePort,
  type ServiceProcess,
  spawnService,
  uniqueName,
} from '@gatehouse/testkit';

export const gcpProject = 'gatehouse-e2e';

export interface TracedTopology {
  proxy: ServiceProcess;
  restEngine: ServiceProcess;
  publisher: ServiceProcess;
  hubs: [ServiceProcess, ServiceProcess];
  /** The Kafka topic the proxy writes request events to and the publisher consumes. */
  requestTopic: string;
  fanoutTopic: string;
  /** REPLICA_ID of each process, by name: proxy, publisher, hub-a, hub-b. */
  replicas: Record<string, string>;
  stop(): Promise<void>;
}

export async function startTracedTopology(): Promise<TracedTopology> {
  const run = uniqueName('traced');
  const requestTopic = `${run}-requests`;
  const fanoutTopic = `${run}-gw-events`;
  const replicas = {
    proxy: `${run}-proxy`,
    publisher: `${run}-publisher`,
    'hub-a': `${run}-hub-a`,
    'hub-b': `${run}-hub-b`,
  };
  // Short batches so a test finds the spans moments after the request.
  const tracing = {
    OTEL_EXPORTER_OTLP_ENDPOINT: dependencyAddress.tracesOtlpUrl,
    OTEL_BSP_SCHEDULE_DELAY: '100',
  };
  const shared = {
    ...tracing,
    ...gatewayEnv({ run, jwtSecret: 'traced-e2e-jwt-secret-that-is-long-enough' }),
  };
  const restPort = await freePort();
  const restEngine = await spawnService({
    entry: 'services/rest-engine/src/main.ts',
    env: {
      ...tracing,
      REST_SERVER_PORT: String(restPort),
      REST_SERVER_HOST: '127.0.0.1',
      REST_CONFIG_FOLDER: 'examples/rest-app',
    },
    readyTimeoutMs: 60_000,
  });
  const apis = [
    {
      id: 'traced-events',
      name: 'traced-events',
      version_data: {
        default: {
          endpoints: [
            {
              id: 'events',
              method: 'POST',
              path_regex: '/traced/events',
              target: 'kafka',
              topic: requestTopic,
            },
          ],
        },
      },
    },
    {
      id: 'traced-rest',
      name: 'traced-rest',
      version_data: { default: { endpoints: [{ id: 'rest', method: 'POST', path_regex: '/api/(.*)' }] } },
      proxy: { target_url: '127.0.0.1', port: restPort },
    },
  ];
  const started = await Promise.allSettled([
    spawnService({
      entry: 'services/proxy/src/main.ts',
      publicPort: true,
      env: {
        ...shared,
        REPLICA_ID: replicas.proxy,
        PROXY_CONFIG_FILE: JSON.stringify(apis),
        PROXY_TARGET_ALLOW: '127.0.0.1',
        PROXY_KAFKA_RESPONSE_TOPICS: `${run}-responses`,
        REQUEST_LOG: 'console',
        LOG_FMT: 'GCL',
        LOG_LEVEL: 'info',
        GOOGLE_CLOUD_PROJECT: gcpProject,
      },
      readyTimeoutMs: 60_000,
    }),
    spawnService({
      entry: 'services/publisher/src/main.ts',
      publicPort: true,
      env: {
        ...shared,
        REPLICA_ID: replicas.publisher,
        KAFKA_SOURCE_TOPICS: requestTopic,
        KAFKATOFILTER_KAFKA_GROUP_ID: `${run}-kafka-to-filter`,
      },
      readyTimeoutMs: 60_000,
    }),
    ...(['hub-a', 'hub-b'] as const).map((name) =>
      spawnService({
        entry: 'services/push-hub/src/main.ts',
        name,
        publicPort: true,
        env: { ...shared, REPLICA_ID: replicas[name] },
        readyTimeoutMs: 60_000,
      }),
    ),
  ]);
  const running = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = started.find((r) => r.status === 'rejected');
  if (failed !== undefined) {
    // Stop what did start, or its processes would keep the test process alive.
    await Promise.all([...running, restEngine].map((p) => p.stop()));
    throw failed.reason;
  }
  const [proxy, publisher, hubA, hubB] = running as [
    ServiceProcess,
    ServiceProcess,
    ServiceProcess,
    ServiceProcess,
  ];
  const all = [proxy, publisher, hubA, hubB, restEngine];
  return {
    proxy,
    restEngine,
    publisher,
    hubs: [hubA, hubB],
    requestTopic,
    fanoutTopic,
    replicas,
    async stop() {
      await Promise.all(all.map((p) => p.stop()));
    },
  };
}
