/**
 * Settings of the Confluent-compatible schema registry behind Avro on Kafka (RIG's
 * KAFKA_SCHEMA_REGISTRY_HOST). Unset: Avro is off, and a Kafka endpoint with a `schema` answers 503.
 */
import { duration, type Field, optionalStr } from '@gatehouse/service-kit';
import { SchemaRegistryClient } from './schema-registry-client.ts';

export const schemaRegistryConfig = {
  KAFKA_SCHEMA_REGISTRY_HOST: registryUrl(),
  KAFKA_SCHEMA_REGISTRY_CACHE_TTL: duration(
    'how long the latest schema id of a subject is reused before the registry is asked again (0: every publish asks; schemas by id are kept for good)',
    '30s',
    { min: '1s', max: '1h', off: true },
  ),
  KAFKA_SCHEMA_REGISTRY_TIMEOUT: duration(
    'time-out of one schema registry request; a registry that does not answer in time counts as unavailable',
    '5s',
    { min: '100ms', max: '1m' },
  ),
};

/** The registry client the settings describe, or undefined when Avro is off. */
export function schemaRegistryFrom(config: {
  KAFKA_SCHEMA_REGISTRY_HOST: string | undefined;
  KAFKA_SCHEMA_REGISTRY_CACHE_TTL: number;
  KAFKA_SCHEMA_REGISTRY_TIMEOUT: number;
}): SchemaRegistryClient | undefined {
  if (config.KAFKA_SCHEMA_REGISTRY_HOST === undefined) return undefined;
  return new SchemaRegistryClient({
    url: config.KAFKA_SCHEMA_REGISTRY_HOST,
    cacheTtlMs: config.KAFKA_SCHEMA_REGISTRY_CACHE_TTL,
    timeoutMs: config.KAFKA_SCHEMA_REGISTRY_TIMEOUT,
  });
}

function registryUrl(): Field<string | undefined> {
  const f = optionalStr(
    'URL of the Confluent-compatible schema registry for Avro on Kafka, http(s)://[user:password@]host:port[/path] (unset: Avro is off)',
  );
  return {
    ...f,
    parse(raw) {
      if (raw === undefined) return undefined;
      const url = URL.parse(raw);
      if (url === null || !['http:', 'https:'].includes(url.protocol))
        throw new Error('must be an http:// or https:// URL');
      return raw;
    },
  };
}
