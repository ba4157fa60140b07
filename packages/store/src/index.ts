export * from './memory-store.ts';
export * from './store.ts';
export * from './redis-store.ts';
export * from './store-config.ts';
export * from './redis-connection.ts';
export * from './redis-outage.ts';
export * from './redis-security.ts';
