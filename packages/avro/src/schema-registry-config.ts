/**
 * Settings of the Confluent-compatible schema registry behind Avro on Kafka (RIG's
 * KAFKA_SCHEMA_REGISTRY_HOST), as managed registries are reached: HTTPS with a CA of yours (or the
 * system's), HTTP basic auth (Confluent Cloud's API key and secret), a client certificate (mutual
 * TLS). Unset: Avro is off, and a Kafka endpoint with a `schema` answers 503. Files are read once at
 * start; bad settings stop start-up with a ConfigError naming them.
 */
import { Agent } from 'node:https';
import {
  ConfigError,
  checkKeyPair,
  duration,
  type Field,
  optionalStr,
  readSettingFile,
} from '@gatehouse/service-kit';
import { type RegistryAuth, SchemaRegistryClient } from './schema-registry-client.ts';

export const schemaRegistryConfig = {
  KAFKA_SCHEMA_REGISTRY_HOST: registryUrl(),
  KAFKA_SCHEMA_REGISTRY_BASIC_AUTH: optionalStr(
    "HTTP basic auth to the registry as <user>:<password> (Confluent's basic.auth.user.info; Confluent Cloud: the API key and secret); instead of credentials in the URL",
  ),
  KAFKA_SCHEMA_REGISTRY_CA_FILE: optionalStr(
    "PEM file of the CA(s) that sign an https registry's certificate; unset: the system's CAs",
  ),
  KAFKA_SCHEMA_REGISTRY_CERT_FILE: optionalStr(
    'PEM client certificate for a registry that verifies clients (mutual TLS); with KAFKA_SCHEMA_REGISTRY_KEY_FILE',
  ),
  KAFKA_SCHEMA_REGISTRY_KEY_FILE: optionalStr('PEM private key of KAFKA_SCHEMA_REGISTRY_CERT_FILE'),
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

export interface SchemaRegistryConfig {
  KAFKA_SCHEMA_REGISTRY_HOST: string | undefined;
  KAFKA_SCHEMA_REGISTRY_BASIC_AUTH?: string | undefined;
  KAFKA_SCHEMA_REGISTRY_CA_FILE?: string | undefined;
  KAFKA_SCHEMA_REGISTRY_CERT_FILE?: string | undefined;
  KAFKA_SCHEMA_REGISTRY_KEY_FILE?: string | undefined;
  KAFKA_SCHEMA_REGISTRY_CACHE_TTL: number;
  KAFKA_SCHEMA_REGISTRY_TIMEOUT: number;
}

/** The registry client the settings describe, or undefined when Avro is off; throws a ConfigError. */
export function schemaRegistryFrom(config: SchemaRegistryConfig): SchemaRegistryClient | undefined {
  const host = config.KAFKA_SCHEMA_REGISTRY_HOST;
  const tlsNames = [
    'KAFKA_SCHEMA_REGISTRY_CA_FILE',
    'KAFKA_SCHEMA_REGISTRY_CERT_FILE',
    'KAFKA_SCHEMA_REGISTRY_KEY_FILE',
  ] as const;
  const setNames = [...tlsNames, 'KAFKA_SCHEMA_REGISTRY_BASIC_AUTH' as const].filter(
    (name) => config[name] !== undefined,
  );
  if (host === undefined) {
    if (setNames.length > 0)
      throw new ConfigError([`${setNames.join(', ')}: set only with KAFKA_SCHEMA_REGISTRY_HOST`]);
    return undefined;
  }
  const url = new URL(host);
  const problems: string[] = [];
  const tlsSet = tlsNames.filter((name) => config[name] !== undefined);
  if (url.protocol === 'http:' && tlsSet.length > 0)
    problems.push(
      `${tlsSet.join(', ')}: the registry is reached over http:// (KAFKA_SCHEMA_REGISTRY_HOST); use https://`,
    );
  const auth = basicAuthOf(url, config.KAFKA_SCHEMA_REGISTRY_BASIC_AUTH, problems);
  const agent = url.protocol === 'https:' ? tlsAgentOf(config, problems) : undefined;
  if (problems.length > 0) throw new ConfigError(problems);
  return new SchemaRegistryClient({
    url: host,
    ...(auth && { auth }),
    ...(agent && { agent }),
    cacheTtlMs: config.KAFKA_SCHEMA_REGISTRY_CACHE_TTL,
    timeoutMs: config.KAFKA_SCHEMA_REGISTRY_TIMEOUT,
  });
}

/** Basic auth from KAFKA_SCHEMA_REGISTRY_BASIC_AUTH or from the URL's user info, never both. */
function basicAuthOf(url: URL, setting: string | undefined, problems: string[]): RegistryAuth | undefined {
  const inUrl = url.username !== '';
  if (setting === undefined)
    return inUrl
      ? { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) }
      : undefined;
  if (inUrl) {
    problems.push(
      'KAFKA_SCHEMA_REGISTRY_BASIC_AUTH: the URL in KAFKA_SCHEMA_REGISTRY_HOST has credentials too; keep one',
    );
    return undefined;
  }
  const colon = setting.indexOf(':');
  if (colon <= 0) {
    // Never the value: it holds a password.
    problems.push('KAFKA_SCHEMA_REGISTRY_BASIC_AUTH: must look like <user>:<password>');
    return undefined;
  }
  return { username: setting.slice(0, colon), password: setting.slice(colon + 1) };
}

/** The https agent of the TLS files (keep-alive: the registry is asked again each cache period). */
function tlsAgentOf(config: SchemaRegistryConfig, problems: string[]): Agent | undefined {
  const names = { cert: 'KAFKA_SCHEMA_REGISTRY_CERT_FILE', key: 'KAFKA_SCHEMA_REGISTRY_KEY_FILE' };
  if (
    (config.KAFKA_SCHEMA_REGISTRY_CERT_FILE === undefined) !==
    (config.KAFKA_SCHEMA_REGISTRY_KEY_FILE === undefined)
  )
    problems.push(`${names.cert} and ${names.key}: set both, or neither`);
  const ca = readSettingFile('KAFKA_SCHEMA_REGISTRY_CA_FILE', config.KAFKA_SCHEMA_REGISTRY_CA_FILE, problems);
  const cert = readSettingFile(names.cert, config.KAFKA_SCHEMA_REGISTRY_CERT_FILE, problems);
  const key = readSettingFile(names.key, config.KAFKA_SCHEMA_REGISTRY_KEY_FILE, problems);
  if (problems.length > 0) return undefined;
  if (cert !== undefined && key !== undefined) checkKeyPair({ cert, key }, names);
  return new Agent({ keepAlive: true, maxSockets: 16, ...(ca && { ca }), ...(cert && key && { cert, key }) });
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
