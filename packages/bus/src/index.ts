export * from './bus.ts';
export * from './kafka-bus.ts';
export * from './memory-bus.ts';
export * from './nats-bus.ts';
export * from './kinesis-bus.ts';
export * from './redis-bus.ts';
export * from './bus-config.ts';
export * from './replica-channel.ts';
