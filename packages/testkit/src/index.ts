export * from './dependencies.ts';
export * from './wait-for.ts';
export * from './sse-client.ts';
export * from './spawn-service.ts';
export * from './longpoll-client.ts';
export * from './ws-client.ts';
export * from './self-signed-certificate.ts';
export * from './cuttable-proxy.ts';
