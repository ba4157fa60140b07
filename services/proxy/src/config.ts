/** The proxy's settings (environment variables; the README lists them with their defaults). */
import { schemaRegistryConfig } from '@gatehouse/avro';
import {
  bool,
  corsConfig,
  duration,
  type Field,
  int,
  list,
  oneOf,
  optionalStr,
  str,
} from '@gatehouse/service-kit';
import { targetAllowSetting } from './forwarding/index.ts';
import { useEnvAllowedSetting } from './definitions/index.ts';

export const requestLogSinks = ['console', 'kafka'] as const;
export type RequestLogSink = (typeof requestLogSinks)[number];

/** A waiting request holds a socket and memory: the same range as an endpoint's response_timeout. */
const responseWait = { min: '100ms', max: '10m' };

export const proxyConfig = {
  PROXY_CONFIG_FILE: optionalStr(
    'API definitions at start: a path to a JSON file or the JSON text itself (a list of APIs)',
  ),
  PROXY_USE_ENV_ALLOWED: useEnvAllowedSetting(),
  PROXY_TARGET_ALLOW: targetAllowSetting(),
  PROXY_RECV_TIMEOUT: duration('how long an HTTP target may take to send its response headers', '5s', {
    min: '100ms',
  }),
  PROXY_BODY_IDLE_TIMEOUT: duration(
    'longest pause inside a streamed response body from an HTTP target, or in a WebSocket tunnel either way (0: none, for SSE)',
    '0',
    { min: '100ms', off: true },
  ),
  PROXY_CONNECT_TIMEOUT: duration('time-out of a TCP (and TLS) connect to an HTTP target', '5s', {
    min: '100ms',
  }),
  PROXY_MAX_CONNECTIONS_PER_TARGET: int('kept-alive connections per target origin', 256, { min: 1 }),
  PROXY_HTTP_ASYNC_RESPONSE_TIMEOUT: duration(
    'wait for POST /v1/responses or /v3/responses (response_from http_async)',
    '5s',
    responseWait,
  ),
  PROXY_KAFKA_RESPONSE_TIMEOUT: duration(
    'wait for a response on Kafka (response_from kafka)',
    '5s',
    responseWait,
  ),
  PROXY_KINESIS_RESPONSE_TIMEOUT: duration(
    'wait for a response on Kinesis (response_from kinesis)',
    '5s',
    responseWait,
  ),
  PROXY_NATS_RESPONSE_TIMEOUT: duration(
    'NATS request/reply time-out (response_from nats)',
    '60s',
    responseWait,
  ),
  PROXY_KAFKA_RESPONSE_TOPICS: list('Kafka topics carrying correlated responses', ['gw-proxy-response']),
  PROXY_KINESIS_RESPONSE_STREAMS: list(
    'Kinesis streams carrying correlated responses (empty: response_from kinesis is off)',
  ),
  PROXY_KAFKA_EVENT_MODE: oneOf(
    'how requests are written to Kafka: one JSON CloudEvent, or binary mode with ce_ headers',
    ['structured', 'binary'] as const,
    'structured',
  ),
  PROXY_KINESIS_ENABLED: bool('publish to Kinesis targets (KINESIS_ENDPOINT, KINESIS_AWS_REGION)', false),
  PROXY_WRAPPED_EVENT_TYPE: str(
    "CloudEvent type of a published request whose body is not a CloudEvent (not gw.…: that namespace is the gateway's own)",
    'proxy.request',
  ),
  PROXY_MAX_EVENT_BYTES: int('largest request body published as an event', 1024 * 1024, { min: 1024 }),
  PROXY_SYNC_INTERVAL: duration(
    'full re-read of the API definitions, healing missed change notifications (0: off)',
    '30s',
    { min: '1s', off: true },
  ),
  PROXY_CONTROL_TIMEOUT: duration(
    'how long a replica waits for the replica holding a request to take its response',
    '2s',
    { min: '100ms' },
  ),
  ...corsConfig,
  ...schemaRegistryConfig,
  REQUEST_LOG: requestLogList(),
  KAFKA_LOG_TOPIC: str('Kafka topic of the request log (REQUEST_LOG=kafka)', 'gw-request-log'),
  KAFKA_LOG_SCHEMA: optionalStr(
    'Avro subject of the request log (REQUEST_LOG=kafka, needs KAFKA_SCHEMA_REGISTRY_HOST): records written with Avro data under its latest schema; unset: JSON',
  ),
};

function requestLogList(): Field<RequestLogSink[]> {
  const names = list('where proxied requests are logged: console, kafka (comma list)');
  return {
    ...names,
    parse(raw) {
      const sinks = names.parse(raw).map((s) => s.toLowerCase());
      const unknown = sinks.filter((s) => !(requestLogSinks as readonly string[]).includes(s));
      if (unknown.length > 0) throw new Error(`unknown ${unknown.join(', ')} (use console, kafka)`);
      return [...new Set(sinks as RequestLogSink[])];
    },
  };
}
