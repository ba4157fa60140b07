export * from './avro-kafka.ts';
export * from './avro-structured.ts';
export * from './schema-registry-client.ts';
export * from './schema-registry-config.ts';
export * from './schema-registry-check.ts';
