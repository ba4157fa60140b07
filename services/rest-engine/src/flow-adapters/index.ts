// Kafka topics and NATS subjects bound to flows (kafka-flow-adapter.yaml, nats-flow-adapter.yaml).
export { type FlowAdapterHost, FlowAdapters } from './flow-adapters.ts';
export { flowAdapterSchemaPath } from './adapter-schema.ts';
