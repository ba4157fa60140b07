export * from './api-definition.ts';
export * from './api-validation.ts';
export * from './config.ts';
export * from './config-source.ts';
export * from './nats-target.ts';
export * from './proxy-service.ts';
export * from './target-allow-list.ts';
export * from './use-env-scope.ts';
