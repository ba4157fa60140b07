/**
 * REQUEST_LOG: one record per matched proxy request, to the console (a log line) and/or to Kafka
 * (a CloudEvent `gw.proxy.api.call` on KAFKA_LOG_TOPIC, data `{endpoint, request_path, remote_ip}`
 * as RIG's `com.rig.proxy.api.call`, plus the API id and method). Logging never delays or fails the
 * request: the Kafka write is not awaited, and its failures are logged.
 */
import type { IncomingMessage } from 'node:http';
import type { Bus } from '@gatehouse/bus';
import { createEvent, toStructuredKafka } from '@gatehouse/cloudevents';
import { ConfigError, type Logger } from '@gatehouse/service-kit';
import {
  activeTraceContext,
  readTraceContextFromHeaders,
  startHop,
  traceContextAttributes,
} from '@gatehouse/tracing';
import type { RequestLogSink } from './config.ts';
import type { Route } from './route-table.ts';

export interface RequestLogOptions {
  sinks: readonly RequestLogSink[];
  logger: Logger;
  kafka?: Bus | undefined;
  topic: string;
}

export type RequestLog = (req: IncomingMessage, route: Route, path: string) => void;

export function createRequestLog(options: RequestLogOptions): RequestLog | undefined {
  const toConsole = options.sinks.includes('console');
  const kafka = options.sinks.includes('kafka') ? options.kafka : undefined;
  if (options.sinks.includes('kafka') && kafka === undefined)
    throw new ConfigError(['REQUEST_LOG: kafka needs KAFKA_BROKERS']);
  if (!toConsole && kafka === undefined) return undefined;
  const { logger, topic } = options;
  return (req, route, path) => {
    const record = {
      api: route.api.id,
      endpoint: route.endpoint.id,
      method: req.method,
      request_path: path,
      remote_ip: req.socket.remoteAddress?.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, ''),
    };
    if (toConsole) logger.info(record, 'proxy request');
    if (kafka === undefined) return;
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
    kafka
      .publish(topic, toStructuredKafka(event))
      .catch((err: unknown) => logger.warn({ err, topic }, 'request log write to Kafka failed'));
  };
}
