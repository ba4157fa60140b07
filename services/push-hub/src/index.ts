export * from './config.ts';
export type * from './connection-tokens.ts';
export * from './hub.ts';
export type * from './hub-auth.ts';
export * from './push-hub-service.ts';
