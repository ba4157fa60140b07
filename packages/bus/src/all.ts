// Every adapter loaded at once: for tests and tools that use several brokers (index.ts loads none).
export * from './index.ts';
export * from './kafka-bus.ts';
export * from './nats-bus.ts';
export * from './kinesis-bus.ts';
export * from './redis-bus.ts';
export * from './nats-connect.ts';
