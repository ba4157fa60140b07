export * from './embedded-gateway.ts';
