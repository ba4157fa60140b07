/**
 * Where the real servers started by tools/deps.sh listen, and how a test stops, starts or restarts
 * one of them (for the "survives a broker restart" cases).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const depsScript = fileURLToPath(new URL('../../../tools/deps.sh', import.meta.url));

export type Dependency = 'kafka' | 'redis' | 'nats' | 'kinesis' | 'traces';

export const dependencyAddress = {
  kafkaBrokers: (process.env.KAFKA_BROKERS ?? `127.0.0.1:${process.env.KAFKA_PORT ?? 9092}`).split(','),
  redisUrl: process.env.REDIS_URL ?? `redis://127.0.0.1:${process.env.REDIS_PORT ?? 6379}`,
  natsUrl: process.env.NATS_URL ?? `nats://127.0.0.1:${process.env.NATS_PORT ?? 4222}`,
  kinesisEndpoint: process.env.KINESIS_ENDPOINT ?? `http://127.0.0.1:${process.env.KINESIS_PORT ?? 4567}`,
  /** The trace backend's OTLP/HTTP receiver: a service's OTEL_EXPORTER_OTLP_ENDPOINT. */
  tracesOtlpUrl: `http://127.0.0.1:${process.env.TRACES_OTLP_PORT ?? 4318}`,
  /** The trace backend's query API (Jaeger's /api/traces/<id>). */
  tracesQueryUrl: `http://127.0.0.1:${process.env.TRACES_QUERY_PORT ?? 16686}`,
};

export async function dependency(action: 'up' | 'down' | 'restart', name: Dependency): Promise<void> {
  await run(depsScript, [action, name], { timeout: 180_000 });
}
