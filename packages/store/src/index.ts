// The Redis store and its connection helpers (ioredis) are not re-exported here: a process on
// STORE=memory never loads the Redis client. connectStore imports it when STORE=redis;
// `@gatehouse/store/redis` reaches it directly (the Redis bus, tests).
export * from './memory-store.ts';
export * from './store.ts';
export * from './store-config.ts';
export * from './redis-security.ts';
export type { RedisClient, RedisConnectionOptions } from './redis-connection.ts';
