/**
 * Where the real servers started by tools/deps.sh listen, and how a test stops, starts, restarts
 * or pauses one of them (for the "survives a broker restart" cases).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const depsScript = fileURLToPath(new URL('../../../tools/deps.sh', import.meta.url));

export type Dependency =
  | 'kafka'
  | 'redis'
  | 'redis-cluster'
  | 'nats'
  | 'kinesis'
  | 'traces'
  | 'zipkin'
  | 'schema-registry'
  | 'redis-tls'
  | 'redis-tls-cluster'
  | 'nats-tls'
  | 'traces-tls';

const clusterPort = Number(process.env.REDIS_CLUSTER_PORT ?? 7000);

export const dependencyAddress = {
  kafkaBrokers: (process.env.KAFKA_BROKERS ?? `127.0.0.1:${process.env.KAFKA_PORT ?? 9092}`).split(','),
  redisUrl: process.env.REDIS_URL ?? `redis://127.0.0.1:${process.env.REDIS_PORT ?? 6379}`,
  /** The three masters of the Redis Cluster, as REDIS_URL names them with REDIS_CLUSTER=true. */
  redisClusterUrl:
    process.env.REDIS_CLUSTER_URL ??
    `redis://${[0, 1, 2].map((i) => `127.0.0.1:${clusterPort + i}`).join(',')}`,
  natsUrl: process.env.NATS_URL ?? `nats://127.0.0.1:${process.env.NATS_PORT ?? 4222}`,
  kinesisEndpoint: process.env.KINESIS_ENDPOINT ?? `http://127.0.0.1:${process.env.KINESIS_PORT ?? 4567}`,
  /** The trace backend's OTLP/HTTP receiver: a service's OTEL_EXPORTER_OTLP_ENDPOINT. */
  tracesOtlpUrl: `http://127.0.0.1:${process.env.TRACES_OTLP_PORT ?? 4318}`,
  /** The trace backend's query API (Jaeger's /api/traces/<id>). */
  tracesQueryUrl: `http://127.0.0.1:${process.env.TRACES_QUERY_PORT ?? 16686}`,
  /** The Zipkin server: spans in at /api/v2/spans (OTEL_EXPORTER_ZIPKIN_ENDPOINT), its query API. */
  zipkinUrl: `http://127.0.0.1:${process.env.ZIPKIN_PORT ?? 9411}`,
  /** The schema registry's Confluent-compatible API (KAFKA_SCHEMA_REGISTRY_HOST). */
  schemaRegistryUrl: `http://127.0.0.1:${process.env.SCHEMA_REGISTRY_PORT ?? 8081}/apis/ccompat/v7`,
};

const tlsFolder = fileURLToPath(new URL('../../../.cache/deps/tls/', import.meta.url));
const tlsClusterPort = Number(process.env.REDIS_TLS_CLUSTER_PORT ?? 7010);

/**
 * The brokers as managed services run them (tools/tls-deps.sh): TLS with client certificates from
 * a local CA, and a user with a password.
 */
export const tlsDependencyAddress = {
  /** TLS only, client certificate required, ACL user `user` (the default user is off). */
  redisUrl: `rediss://127.0.0.1:${process.env.REDIS_TLS_PORT ?? 6390}`,
  /** The three masters of a Redis Cluster, TLS between nodes too, the same user. */
  redisClusterUrl: `rediss://${[0, 1, 2].map((i) => `127.0.0.1:${tlsClusterPort + i}`).join(',')}`,
  /** TLS, client certificate required, user `user`. */
  natsUrl: `tls://127.0.0.1:${process.env.NATS_TLS_PORT ?? 4232}`,
  /** TLS (no client certificate), authentication by `token` only. */
  natsTokenUrl: `tls://127.0.0.1:${process.env.NATS_TLS_TOKEN_PORT ?? 4233}`,
  token: 'tls-deps-token',
  /** A collector taking OTLP over TLS with client certificates only, gRPC and HTTP. */
  tracesOtlpGrpcUrl: `https://127.0.0.1:${process.env.TRACES_TLS_OTLP_GRPC_PORT ?? 4327}`,
  tracesOtlpHttpUrl: `https://127.0.0.1:${process.env.TRACES_TLS_OTLP_HTTP_PORT ?? 4328}`,
  /** Its query API (plain HTTP), for fetchTrace. */
  tracesQueryUrl: `http://127.0.0.1:${process.env.TRACES_TLS_QUERY_PORT ?? 16696}`,
  /** Kafka's SASL_SSL listener: SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN, user `user`. */
  kafkaSaslBrokers: `127.0.0.1:${process.env.KAFKA_TLS_SASL_PORT ?? 9193}`,
  /** Kafka's SSL listener, client certificate required. */
  kafkaMtlsBrokers: `127.0.0.1:${process.env.KAFKA_TLS_MTLS_PORT ?? 9194}`,
  /** The schema registry behind HTTPS with HTTP basic auth (user `user`), its ccompat API. */
  schemaRegistryUrl: `https://127.0.0.1:${process.env.SCHEMA_REGISTRY_TLS_PORT ?? 8443}/apis/ccompat/v7`,
  /** The same registry behind HTTPS with client certificates required. */
  schemaRegistryMtlsUrl: `https://127.0.0.1:${process.env.SCHEMA_REGISTRY_MTLS_PORT ?? 8444}/apis/ccompat/v7`,
  user: 'gatehouse',
  password: 'tls-deps-secret',
  /** The servers' certificate (for 127.0.0.1 and localhost), to pin it. */
  serverCertFile: `${tlsFolder}server.pem`,
  caFile: `${tlsFolder}ca.pem`,
  certFile: `${tlsFolder}client.pem`,
  keyFile: `${tlsFolder}client-key.pem`,
};

/** A service's settings for the Redis of tools/tls-deps.sh (the single server; REDIS_URL to change). */
export const redisOverTlsSettings: Record<string, string> = {
  REDIS_URL: tlsDependencyAddress.redisUrl,
  REDIS_TLS_CA_FILE: tlsDependencyAddress.caFile,
  REDIS_TLS_CERT_FILE: tlsDependencyAddress.certFile,
  REDIS_TLS_KEY_FILE: tlsDependencyAddress.keyFile,
  REDIS_USERNAME: tlsDependencyAddress.user,
  REDIS_PASSWORD: tlsDependencyAddress.password,
};

/** A service's settings for the NATS of tools/tls-deps.sh. */
export const natsOverTlsSettings: Record<string, string> = {
  NATS_SERVERS: tlsDependencyAddress.natsUrl,
  NATS_TLS_CA_FILE: tlsDependencyAddress.caFile,
  NATS_TLS_CERT_FILE: tlsDependencyAddress.certFile,
  NATS_TLS_KEY_FILE: tlsDependencyAddress.keyFile,
  NATS_USER: tlsDependencyAddress.user,
  NATS_PASSWORD: tlsDependencyAddress.password,
};

/** A service's settings for the Kafka of tools/tls-deps.sh over SASL_SSL, with that mechanism. */
export function kafkaOverSaslSettings(
  mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512',
): Record<string, string> {
  const { kafkaSaslBrokers, caFile, user, password } = tlsDependencyAddress;
  return {
    KAFKA_BROKERS: kafkaSaslBrokers,
    KAFKA_SSL_CA_CERTFILE: caFile,
    KAFKA_SASL: `${mechanism}:${user}:${password}`,
  };
}

/** A service's settings for the Kafka of tools/tls-deps.sh over mutual TLS. */
export const kafkaOverMtlsSettings: Record<string, string> = {
  KAFKA_BROKERS: tlsDependencyAddress.kafkaMtlsBrokers,
  KAFKA_SSL_CA_CERTFILE: tlsDependencyAddress.caFile,
  KAFKA_SSL_CERTFILE: tlsDependencyAddress.certFile,
  KAFKA_SSL_KEYFILE: tlsDependencyAddress.keyFile,
};

/** The Redis deployments tests run against: a single server and a Redis Cluster of three masters. */
export const redisDeployments: ReadonlyArray<{
  name: string;
  url: string;
  cluster: boolean;
  dependency: Dependency;
}> = [
  { name: 'redis', url: dependencyAddress.redisUrl, cluster: false, dependency: 'redis' },
  {
    name: 'redis cluster',
    url: dependencyAddress.redisClusterUrl,
    cluster: true,
    dependency: 'redis-cluster',
  },
];

export async function dependency(action: 'up' | 'down' | 'restart', name: Dependency): Promise<void> {
  await run(depsScript, [action, name], { timeout: 180_000 });
}

/**
 * Freezes (SIGSTOP) or thaws (SIGCONT) a server started by tools/deps.sh: its connections stay open
 * but nothing is answered meanwhile, as with a server stuck in a long pause.
 */
export function pauseDependency(name: Dependency, paused: boolean): void {
  const pidFile = fileURLToPath(new URL(`../../../.cache/deps/${name}/pid`, import.meta.url));
  process.kill(Number(readFileSync(pidFile, 'utf8').trim()), paused ? 'SIGSTOP' : 'SIGCONT');
}
