// The broker adapters (kafkajs, NATS, the Kinesis SDK, ioredis) are not re-exported here: a
// process loads only the client of the broker its settings name (connectBus imports it then).
// `@gatehouse/bus/kafka` and `@gatehouse/bus/nats` reach one adapter, `@gatehouse/bus/all` every one.
export * from './bus.ts';
export * from './memory-bus.ts';
export * from './bus-config.ts';
export * from './published-at.ts';
export * from './replica-channel.ts';
export * from './replica-registry.ts';
export * from './nats-security.ts';
export * from './kafka-security.ts';
