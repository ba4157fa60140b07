export * from './config.ts';
export * from './events-endpoint.ts';
export * from './publisher-service.ts';
export type { SourceSpec } from './source-consumers.ts';
