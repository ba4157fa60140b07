export * from './dependencies.ts';
export * from './wait-for.ts';
export * from './sse-client.ts';
