/**
 * The spans the gateway's own hops make, named and described by the OpenTelemetry semantic
 * conventions: SERVER for an HTTP request taken in, CLIENT for one forwarded, PRODUCER for a message
 * put on a bus, CONSUMER for one taken off it. A request or an event that arrives carries its
 * caller's context (traceparent header or CloudEvent attribute): SERVER and CONSUMER spans start
 * under it; CLIENT and PRODUCER spans start under the span that is active where they are made.
 *
 * Callers start these only while isTracingActive(), so none of this runs when tracing is off.
 */
import {
  type Context,
  context,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TimeInput,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_FULL,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
} from '@opentelemetry/semantic-conventions';
import type { TraceContext } from './propagation.ts';
import { contextWithRemoteParent, toSpanContext } from './span-context.ts';

export type { Span, Tracer } from '@opentelemetry/api';

// The messaging conventions are still in development: their names are copied here, as the
// semantic-conventions package advises for attributes outside its stable entry point.
export const ATTR_MESSAGING_SYSTEM = 'messaging.system';
export const ATTR_MESSAGING_DESTINATION_NAME = 'messaging.destination.name';
export const ATTR_MESSAGING_OPERATION_TYPE = 'messaging.operation.type';
export const ATTR_MESSAGING_OPERATION_NAME = 'messaging.operation.name';
export const ATTR_MESSAGING_CONSUMER_GROUP_NAME = 'messaging.consumer.group.name';
export const ATTR_CLOUDEVENTS_EVENT_ID = 'cloudevents.event_id';
export const ATTR_CLOUDEVENTS_EVENT_TYPE = 'cloudevents.event_type';
/** How many connections of this replica an event went to (one delivery span per event, not per connection). */
export const ATTR_GW_DELIVERY_RECIPIENTS = 'gw.delivery.recipients';

/** The tracer a gateway component records its spans with (its instrumentation scope). */
export function gatewayTracer(component: string): Tracer {
  return trace.getTracer(`@gatehouse/${component}`);
}

/** Runs `fn` with `span` active, so log lines and spans made inside belong to it. */
export function withActiveSpan<T>(span: Span, fn: () => T): T {
  return context.with(trace.setSpan(context.active(), span), fn);
}

export interface HttpServerRequest {
  method: string;
  path: string;
  /** The matched route template (`http.route`), when one matched. */
  route?: string | undefined;
  scheme: 'http' | 'https';
}

/**
 * `{method} {route}` (or just the method) under the caller's context (from the traceparent header,
 * or the event the request carried); `startTime` when the span starts after the request did.
 */
export function startHttpServerSpan(
  tracer: Tracer,
  request: HttpServerRequest,
  caller: TraceContext | undefined,
  startTime?: TimeInput,
): Span {
  const attributes: Record<string, string> = {
    [ATTR_HTTP_REQUEST_METHOD]: request.method,
    [ATTR_URL_PATH]: request.path,
    [ATTR_URL_SCHEME]: request.scheme,
  };
  if (request.route !== undefined) attributes[ATTR_HTTP_ROUTE] = request.route;
  const name = request.route === undefined ? request.method : `${request.method} ${request.route}`;
  return tracer.startSpan(
    name,
    { kind: SpanKind.SERVER, attributes, ...(startTime !== undefined && { startTime }) },
    contextWithRemoteParent(caller, ROOT_CONTEXT),
  );
}

/** A server span fails on a 5xx only: a 4xx is the client's error, not the server's. */
export function endHttpServerSpan(span: Span, status: number): void {
  span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
  if (status >= 500) {
    span.setAttribute(ATTR_ERROR_TYPE, String(status));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/** A forwarded request, under the active span. */
export function startHttpClientSpan(tracer: Tracer, method: string, url: URL, parent?: Context): Span {
  return tracer.startSpan(
    method,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        [ATTR_HTTP_REQUEST_METHOD]: method,
        [ATTR_SERVER_ADDRESS]: url.hostname,
        [ATTR_SERVER_PORT]: Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
        [ATTR_URL_FULL]: url.href,
      },
    },
    parent ?? context.active(),
  );
}

/** A client span fails on any 4xx/5xx or when no response came (`outcome` names why). */
export function endHttpClientSpan(span: Span, outcome: number | string): void {
  if (typeof outcome === 'number') span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, outcome);
  if (typeof outcome === 'string' || outcome >= 400) {
    span.setAttribute(ATTR_ERROR_TYPE, String(outcome));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

export interface MessagingDestination {
  /** `messaging.system`: the bus kind (kafka, redis, nats, kinesis, memory). */
  system: string;
  /** Topic, stream or subject. */
  destination: string;
  /** The CloudEvent carried, when known when the span starts. */
  event?: { id?: unknown; type?: unknown } | undefined;
}

/** `send {destination}`: a message put on a bus, under the active span (or `parent`). */
export function startProducerSpan(tracer: Tracer, target: MessagingDestination, parent?: Context): Span {
  return tracer.startSpan(
    `send ${target.destination}`,
    { kind: SpanKind.PRODUCER, attributes: messagingAttributes(target, 'send', 'send') },
    parent ?? context.active(),
  );
}

export interface ConsumedMessage extends MessagingDestination {
  /** `messaging.operation.name`, also the first word of the span name: process, deliver … */
  operation: string;
  consumerGroup?: string | undefined;
}

/**
 * `{operation} {destination}`: work done for a message taken off a bus, under the context the
 * message carried (a new trace when it carried none). Its type is `process`: the span covers
 * handling the message, not fetching it.
 */
export function startConsumerSpan(
  tracer: Tracer,
  message: ConsumedMessage,
  carried: TraceContext | undefined,
): Span {
  const attributes = messagingAttributes(message, 'process', message.operation);
  if (message.consumerGroup !== undefined)
    attributes[ATTR_MESSAGING_CONSUMER_GROUP_NAME] = message.consumerGroup;
  return tracer.startSpan(
    `${message.operation} ${message.destination}`,
    { kind: SpanKind.CONSUMER, attributes },
    contextWithRemoteParent(carried, ROOT_CONTEXT),
  );
}

/** Ends a span, marked failed with the error's name when there is one. */
export function endSpan(span: Span, error?: unknown): void {
  if (error !== undefined) {
    span.setAttribute(ATTR_ERROR_TYPE, error instanceof Error ? error.name : 'error');
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: error instanceof Error ? error.message : undefined,
    });
  }
  span.end();
}

/**
 * Links `span` to a context of another trace, e.g. the one a CloudEvent brought in its body when the
 * request that carried it started a trace of its own; nothing for the same trace.
 */
export function linkOtherTrace(span: Span, other: TraceContext | undefined): void {
  if (other === undefined || other.traceparent.traceId === span.spanContext().traceId) return;
  const link: Link = { context: toSpanContext(other) };
  span.addLink(link);
}

function messagingAttributes(
  target: MessagingDestination,
  type: string,
  name: string,
): Record<string, string> {
  const attributes: Record<string, string> = {
    [ATTR_MESSAGING_SYSTEM]: target.system,
    [ATTR_MESSAGING_DESTINATION_NAME]: target.destination,
    [ATTR_MESSAGING_OPERATION_TYPE]: type,
    [ATTR_MESSAGING_OPERATION_NAME]: name,
  };
  if (typeof target.event?.id === 'string') attributes[ATTR_CLOUDEVENTS_EVENT_ID] = target.event.id;
  if (typeof target.event?.type === 'string') attributes[ATTR_CLOUDEVENTS_EVENT_TYPE] = target.event.type;
  return attributes;
}
