/**
 * The CloudEvent a request to a kafka, kinesis or nats endpoint becomes:
 * - a CloudEvent body (structured JSON, `application/cloudevents+json`, or HTTP binary mode with
 *   `ce-` headers) is kept as it is, after validation (an invalid one is refused with its problems);
 * - the deprecated `{ "partition": …, "event": {…} }` wrapper is unwrapped, its partition becoming
 *   `gw.target_partition`;
 * - any other body is not refused (RIG answered 400) but wrapped into the `data` of a new 0.2 event,
 *   as the spec says for events that do not follow CloudEvents;
 * an event in the gateway's own namespace (a `gw.…` type or the source `gatehouse`) is refused,
 * as on every producer surface (gateway-namespace.ts in @gatehouse/cloudevents);
 * then the request's connection data goes into the `gw` extension (keeping `target_partition` and
 * any other keys; without its credentials unless the endpoint asks, event-credentials.ts), the correlation id too when a response is awaited, and the trace context of the
 * event (or of the request headers) continues with a new span.
 */
import type { IncomingMessage } from 'node:http';
import {
  type CloudEvent,
  connectionDataFromRequest,
  essence,
  fromJsonValue,
  gatewayNamespaceProblems,
  wildcardTypeProblems,
  InvalidCloudEventError,
  isJsonMediaType,
  looksLikeCloudEvent,
  parseHttpEvent,
  problem,
  withConnectionData,
  withCorrelation,
  withTargetPartition,
  wrapAsCloudEvent,
} from '@gatehouse/cloudevents';
import {
  readTraceContextFromEvent,
  readTraceContextFromHeaders,
  startHop,
  type TraceContext,
  withTraceContext,
} from '@gatehouse/tracing';
import type { AuthSettings } from '../definitions/index.ts';
import { withoutCredentials } from './event-credentials.ts';

export interface RequestEventOptions {
  /** Type of the event a non-CloudEvent body is wrapped into. */
  wrappedType: string;
  correlation?: string | undefined;
  /**
   * The API's token sources; the request's credentials are left out of `gw` unless `keep` (the
   * endpoint's `publish_credentials`).
   */
  credentials: { auth: AuthSettings; keep: boolean };
  /**
   * The context the event goes on with, from the one it carried (its own attributes, else the
   * request's headers): the producer span's when tracing; by default a new span id in that trace.
   */
  nextHop?: ((carried: TraceContext | undefined) => TraceContext) | undefined;
}

/** Throws InvalidCloudEventError (answer 400) or UnsupportedCloudEventError (answer 415). */
export function requestEvent(req: IncomingMessage, body: Buffer, options: RequestEventOptions): CloudEvent {
  let event = bodyEvent(req, body, options.wrappedType);
  // The target may be a publisher's source topic or the fan-out stream: the proxy is a producer.
  const reserved = [...gatewayNamespaceProblems(event), ...wildcardTypeProblems(event)];
  if (reserved.length > 0) throw new InvalidCloudEventError(reserved);
  const connection = connectionDataFromRequest(req);
  const { auth, keep } = options.credentials;
  event = withConnectionData(event, keep ? connection : withoutCredentials(connection, auth));
  if (options.correlation !== undefined) event = withCorrelation(event, options.correlation);
  const carried = readTraceContextFromEvent(event) ?? readTraceContextFromHeaders(req.headers);
  return withTraceContext(event, (options.nextHop ?? startHop)(carried));
}

function bodyEvent(req: IncomingMessage, body: Buffer, wrappedType: string): CloudEvent {
  const contentType = req.headers['content-type'];
  const type = essence(contentType);
  if (req.headers['ce-specversion'] !== undefined || type?.startsWith('application/cloudevents'))
    return parseHttpEvent({ headers: req.headers, body });
  if (body.length === 0) return wrapAsCloudEvent(undefined, { type: wrappedType });
  if (!isJsonMediaType(contentType)) return wrapAsCloudEvent(body, { type: wrappedType, contentType });
  const value = parseJson(body);
  if (looksLikeCloudEvent(value)) return fromJsonValue(value);
  if (isLegacyWrapper(value)) return withTargetPartition(fromJsonValue(value.event), String(value.partition));
  return wrapAsCloudEvent(value, { type: wrappedType, contentType: 'application/json' });
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new InvalidCloudEventError([
      problem('body', 'json', `expected a JSON encoded request body: ${(err as Error).message}`),
    ]);
  }
}

function isLegacyWrapper(value: unknown): value is { partition: unknown; event: unknown } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return (
    keys.length === 2 &&
    keys.includes('partition') &&
    keys.includes('event') &&
    looksLikeCloudEvent((value as { event: unknown }).event)
  );
}
