/**
 * Every service as its own process on the real brokers, as the full stack runs: the event topology
 * (two publishers, two push-hub replicas) plus two proxies, the blacklist service and the REST
 * engine with the example app. Hubs, proxies and the blacklist share one store key prefix, so a
 * blacklisting kills hub sessions.
 */
import {
  dependencyAddress,
  freePort,
  type ServiceProcess,
  spawnService,
  uniqueName,
} from '@gatehouse/testkit';
import { type EventTopology, jwtSecret, startEventTopology } from './event-topology.ts';

export interface FullTopologyOptions {
  /** API definitions the proxies start with (PROXY_CONFIG_FILE). */
  proxyApis?: unknown[];
  /** Extra settings of both hub replicas. */
  hubEnv?: Record<string, string>;
}

export interface FullTopology extends EventTopology {
  keyPrefix: string;
  proxies: ServiceProcess[];
  blacklist: ServiceProcess;
  restEngine: ServiceProcess;
  /** `http://127.0.0.1:<REST_SERVER_PORT>` of the REST engine. */
  restUrl: string;
  /** Every process, with the name of the service it runs. */
  processes(): Array<{ service: string; process: ServiceProcess }>;
}

export async function startFullTopology(options: FullTopologyOptions = {}): Promise<FullTopology> {
  const keyPrefix = `${uniqueName('e2e-full')}:`;
  const events = await startEventTopology({ STORE_KEY_PREFIX: keyPrefix, ...options.hubEnv });
  const shared = {
    STORE: 'redis',
    STORE_KEY_PREFIX: keyPrefix,
    REDIS_URL: dependencyAddress.redisUrl,
    CONTROL_BUS: 'redis',
    JWT_SECRET_KEY: jwtSecret,
    TOKEN_SECRET: `${keyPrefix}proxy-token-secret`,
  };
  const restPort = await freePort();
  const [proxies, blacklist, restEngine] = await Promise.all([
    Promise.all(
      ['a', 'b'].map((r) =>
        spawnService({
          entry: 'services/proxy/src/main.ts',
          name: `proxy-${r}`,
          publicPort: true,
          // The tests' backends listen on loopback, which the proxy refuses unless listed.
          env: {
            ...shared,
            PROXY_TARGET_ALLOW: '127.0.0.1',
            PROXY_CONFIG_FILE: JSON.stringify(options.proxyApis ?? []),
          },
          readyTimeoutMs: 60_000,
        }),
      ),
    ),
    spawnService({ entry: 'services/blacklist/src/main.ts', env: shared, readyTimeoutMs: 60_000 }),
    spawnService({
      entry: 'services/rest-engine/src/main.ts',
      // The example app (relative to the repository, the services' working directory).
      env: {
        REST_SERVER_PORT: String(restPort),
        REST_SERVER_HOST: '127.0.0.1',
        REST_CONFIG_FOLDER: 'examples/rest-app',
      },
      readyTimeoutMs: 60_000,
    }),
  ]).catch(async (err) => {
    await events.stop();
    throw err;
  });
  return {
    ...events,
    keyPrefix,
    proxies,
    blacklist,
    restEngine,
    restUrl: `http://127.0.0.1:${restPort}`,
    processes: () => [
      ...events.hubs.map((process) => ({ service: 'push-hub', process })),
      ...events.publishers.map((process) => ({ service: 'publisher', process })),
      ...proxies.map((process) => ({ service: 'proxy', process })),
      { service: 'blacklist', process: blacklist },
      { service: 'rest-engine', process: restEngine },
    ],
    async stop() {
      await Promise.all([
        events.stop(),
        ...proxies.map((p) => p.stop()),
        blacklist.stop(),
        restEngine.stop(),
      ]);
    },
  };
}
