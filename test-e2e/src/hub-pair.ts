/**
 * Two push-hub processes on one Kafka fan-out topic, with Redis as store and control channel, each
 * on ports of its own that stay its own across restarts (a fault test stops and starts a replica in
 * place), and the nginx edge of deploy/nginx with just the two hubs as its upstream.
 */
import { dependencyAddress, freePort, type ServiceProcess, spawnService } from '@gatehouse/testkit';
import { type NginxEdge, startNginxEdge } from './nginx-edge.ts';

export interface HubSlot {
  name: string;
  env: Record<string, string>;
}

/** The settings both hubs share: `run` names the topic's consumers, keys and secret; `extra` wins. */
export function kafkaHubEnv(
  run: string,
  topic: string,
  extra: Record<string, string>,
): Record<string, string> {
  return {
    FANOUT_BUS: 'kafka',
    FANOUT_TOPIC: topic,
    CONTROL_BUS: 'redis',
    STORE: 'redis',
    STORE_KEY_PREFIX: `${run}:`,
    REDIS_URL: dependencyAddress.redisUrl,
    KAFKA_BROKERS: dependencyAddress.kafkaBrokers.join(','),
    TOKEN_SECRET: `${run}-token-secret`,
    ...extra,
  };
}

/** Hub a and hub b: their names, replica ids and ports. */
export function hubSlots(run: string, env: Record<string, string>): Promise<HubSlot[]> {
  return Promise.all(
    ['a', 'b'].map(async (r) => ({
      name: `hub-${r}`,
      env: {
        ...env,
        REPLICA_ID: `${run}-hub-${r}`,
        INBOUND_PORT: String(await freePort()),
        API_PORT: String(await freePort()),
      },
    })),
  );
}

export function startHub(slot: HubSlot): Promise<ServiceProcess> {
  return spawnService({
    entry: 'services/push-hub/src/main.ts',
    name: slot.name,
    publicPort: true,
    env: slot.env,
    readyTimeoutMs: 60_000,
  });
}

/** nginx in front of the hubs (the template's other upstreams point at a closed port). */
export function edgeInFrontOf(hubs: ServiceProcess[]): Promise<NginxEdge> {
  const hostPort = (url: string) => new URL(url).host;
  const none = ['127.0.0.1:9'];
  return startNginxEdge({
    pushHub: hubs.map((h) => hostPort(h.publicUrl!)),
    pushHubApi: hubs.map((h) => hostPort(h.apiUrl)),
    publisher: none,
    publisherApi: none,
    proxy: none,
    proxyApi: none,
    blacklistApi: none,
  });
}
