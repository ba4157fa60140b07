/** `@gatehouse/store/redis`: everything that loads ioredis, imported only where Redis is configured. */
export * from './redis-store.ts';
export * from './redis-connection.ts';
export * from './redis-outage.ts';
