/**
 * REQUEST_LOG: one record per matched proxy request, to the console (a log line) and/or to Kafka
 * (a CloudEvent `gw.proxy.api.call` on KAFKA_LOG_TOPIC, data `{endpoint, request_path, remote_ip}`
 * as RIG's `com.rig.proxy.api.call`, plus the API id and method). With KAFKA_LOG_SCHEMA, as RIG had
 * it, the record goes in binary mode with Avro data under that subject's latest schema (the
 * Confluent wire format, like an endpoint's `schema`); the subject is checked at start. Logging
 * never delays or fails the request: the Kafka write is not awaited, and its failures are logged.
 */
import type { IncomingMessage } from 'node:http';
import type { Bus } from '@gatehouse/bus';
import {
  AvroDataMismatchError,
  SchemaNotFoundError,
  type SchemaRegistryClient,
  toAvroKafka,
} from '@gatehouse/avro';
import { type CloudEvent, createEvent, toStructuredKafka } from '@gatehouse/cloudevents';
import { ConfigError, DependencyUnavailableError, type Logger, redactUrl } from '@gatehouse/service-kit';
import {
  activeTraceContext,
  readTraceContextFromHeaders,
  startHop,
  traceContextAttributes,
} from '@gatehouse/tracing';
import type { RequestLogSink } from '../config.ts';
import type { Route } from '../routing/index.ts';

export interface RequestLogOptions {
  sinks: readonly RequestLogSink[];
  logger: Logger;
  kafka?: Bus | undefined;
  topic: string;
  /** KAFKA_LOG_SCHEMA and the registry (KAFKA_SCHEMA_REGISTRY_HOST); unset: the records are JSON. */
  avro?: RequestLogAvro | undefined;
}

export interface RequestLogAvro {
  subject: string | undefined;
  registry: SchemaRegistryClient | undefined;
}

/** What one record holds (a schema for KAFKA_LOG_SCHEMA has these fields; remote_ip may be null). */
interface RequestRecord {
  api: string;
  endpoint: string;
  method: string;
  request_path: string;
  remote_ip: string | null;
}

export type RequestLog = (req: IncomingMessage, route: Route, path: string) => void;

export function createRequestLog(options: RequestLogOptions): RequestLog | undefined {
  const toConsole = options.sinks.includes('console');
  const kafka = options.sinks.includes('kafka') ? options.kafka : undefined;
  if (options.sinks.includes('kafka') && kafka === undefined)
    throw new ConfigError(['REQUEST_LOG: kafka needs KAFKA_BROKERS']);
  if (options.avro?.subject !== undefined && !options.sinks.includes('kafka'))
    throw new ConfigError(['KAFKA_LOG_SCHEMA: only with REQUEST_LOG=kafka']);
  if (!toConsole && kafka === undefined) return undefined;
  const { logger, topic } = options;
  const encode = kafka === undefined ? undefined : encoder(options.avro);
  return (req, route, path) => {
    const record: RequestRecord = {
      api: route.api.id,
      endpoint: route.endpoint.id,
      method: req.method ?? 'GET',
      request_path: redactUrl(path),
      remote_ip: req.socket.remoteAddress?.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '') ?? null,
    };
    if (toConsole) logger.info(record, 'proxy request');
    if (kafka === undefined || encode === undefined) return;
    const event = createEvent({
      type: 'gw.proxy.api.call',
      source: '/gw',
      contentType: 'application/json',
      data: record,
      // While tracing, the record names the request's SERVER span; else a new hop of the caller's.
      extensions: traceContextAttributes(
        activeTraceContext() ?? startHop(readTraceContextFromHeaders(req.headers)),
      ),
    });
    encode(event)
      .then((message) => kafka.publish(topic, message))
      .catch((err: unknown) => logger.warn({ err, topic }, 'request log write to Kafka failed'));
  };
}

/** JSON (a structured CloudEvent), or Avro data under KAFKA_LOG_SCHEMA's subject. */
function encoder(avro: RequestLogAvro | undefined) {
  const subject = avro?.subject;
  if (subject === undefined) return async (event: CloudEvent) => toStructuredKafka(event);
  const registry = avro?.registry;
  if (registry === undefined) throw new ConfigError(['KAFKA_LOG_SCHEMA: needs KAFKA_SCHEMA_REGISTRY_HOST']);
  return (event: CloudEvent) => toAvroKafka(event, subject, registry);
}

/**
 * At start, with KAFKA_LOG_SCHEMA: the registry knows the subject and a record fits its latest
 * schema, or start-up stops naming the setting. A registry that cannot be reached now is no
 * refusal: the records written meanwhile fail and are logged, as any Kafka write of the log.
 */
export async function checkRequestLogSchema(avro: RequestLogAvro): Promise<void> {
  if (avro.subject === undefined || avro.registry === undefined) return;
  const sample: RequestRecord = {
    api: 'api',
    endpoint: 'endpoint',
    method: 'GET',
    request_path: '/',
    remote_ip: '127.0.0.1',
  };
  try {
    await avro.registry.encode(avro.subject, sample);
    await avro.registry.encode(avro.subject, { ...sample, remote_ip: null });
  } catch (err) {
    if (err instanceof SchemaNotFoundError || err instanceof AvroDataMismatchError)
      throw new ConfigError([
        `KAFKA_LOG_SCHEMA: ${err.message}; a request log record has the fields api, endpoint, method, request_path (strings) and remote_ip (a string or null)`,
      ]);
    if (!(err instanceof DependencyUnavailableError)) throw err;
  }
}
