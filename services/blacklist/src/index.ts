export * from './blacklist-metrics.ts';
export * from './blacklist-request.ts';
export * from './blacklist-service.ts';
export * from './config.ts';
export * from './session-blacklist.ts';
export * from './store-lock.ts';
export { v1DeprecatedAt, v1DeprecationHeaders } from './v1-handlers.ts';
