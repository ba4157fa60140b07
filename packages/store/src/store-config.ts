/** Choosing and connecting the store from environment settings, the same way in every service. */
import { bool, type ConfigOf, oneOf, str } from '@gatehouse/service-kit';
import { MemoryStore } from './memory-store.ts';
import { redisSecurityConfig, redisSecurityOptions } from './redis-security.ts';
import type { Store } from './store.ts';

/**
 * Where Redis is, how Gatehouse proves who it is (redis-security.ts) and how keys are named: shared
 * by the store and the Redis bus.
 */
export const redisConnectionConfig = {
  REDIS_URL: str('Redis URL for streams, pub/sub and the store', 'redis://127.0.0.1:6379'),
  REDIS_CLUSTER: bool(
    'Redis is a Redis Cluster: REDIS_URL names one or more of its nodes, redis://[user:password@]host:port[,host:port…]',
    false,
  ),
  STORE_KEY_PREFIX: str(
    'prefix of every key Gatehouse writes, to share a Redis safely (Redis bus streams too)',
    'gw:',
  ),
  ...redisSecurityConfig,
};

export const storeConfig = {
  STORE: oneOf('where shared state lives (memory: this process only)', ['redis', 'memory'] as const, 'redis'),
  ...redisConnectionConfig,
  REDIS_SET_KEYSPACE_EVENTS: bool(
    "let Gatehouse add 'Ex' to the Redis server's notify-keyspace-events with CONFIG SET (off: the server must have them, or readiness fails)",
    false,
  ),
};

export async function connectStore(config: ConfigOf<typeof storeConfig>): Promise<Store> {
  if (config.STORE === 'memory') return new MemoryStore();
  const { RedisStore } = await import('./redis-store.ts');
  return RedisStore.connect({
    url: config.REDIS_URL,
    cluster: config.REDIS_CLUSTER,
    redis: redisSecurityOptions(config),
    namespace: config.STORE_KEY_PREFIX,
    setKeyspaceEvents: config.REDIS_SET_KEYSPACE_EVENTS,
  });
}
