/**
 * The reverse proxy on the public edge: the last handler, so it sees every path no other service
 * claimed. A request is matched (method + anchored path_regex), logged (REQUEST_LOG), checked for a
 * token when its endpoint is secured, then forwarded to its HTTP target or published as an event,
 * and answered from wherever `response_from` says.
 *
 * Answers of the proxy itself (reference §2.4, kept from RIG so clients see the same): 404
 * `{"message":"Not Found"}`, 401 `Authentication failed.`, 502 `Bad gateway.`, 202 `Accepted.`;
 * a time-out is 504 with a sentence instead of RIG's empty body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AvroDataMismatchError } from '@gatehouse/avro';
import { InvalidCloudEventError, UnsupportedCloudEventError } from '@gatehouse/cloudevents';
import {
  assertJsonDepth,
  type CorsPolicy,
  JsonTooDeepError,
  type Logger,
  readBody,
  redactUrl,
  requestPath,
  sendJson,
  sendText,
  sendUnavailable,
  unavailabilityOf,
  unavailableHeaders,
} from '@gatehouse/service-kit';
import {
  ATTR_CLOUDEVENTS_EVENT_ID,
  ATTR_CLOUDEVENTS_EVENT_TYPE,
  endHttpClientSpan,
  endHttpServerSpan,
  endSpan,
  gatewayTracer,
  hopTraceContext,
  isTracingActive,
  linkOtherTrace,
  readTraceContextFromHeaders,
  type Span,
  startHttpClientSpan,
  startHttpServerSpan,
  startProducerSpan,
  type TraceContext,
  withActiveSpan,
} from '@gatehouse/tracing';
import { type ResponseFrom, waitsForCorrelation } from '../definitions/index.ts';
import { preflightRules, refusedTokenHeaders } from './cors.ts';
import { AvroNotConfiguredError, type EventPublisher, requestEvent } from '../events/index.ts';
import { type HttpForwarder, refusedTargetAnswer, upstreamHeaders } from '../forwarding/index.ts';
import {
  type JwtGuard,
  type Route,
  type RouteMatch,
  type RouteTable,
  upstreamPath,
} from '../routing/index.ts';
import type { NatsTarget } from '../nats/index.ts';
import type { CorrelatedResponse, PendingRequest, PendingResponses } from '../responses/index.ts';
import type { EndpointMetrics, ProxyMetrics, RequestStatus } from './proxy-metrics.ts';
import type { RequestLog } from './request-log.ts';

export interface ProxyTimeouts {
  /** Response headers of an HTTP target. */
  recvMs: number;
  /** Waits for correlated responses, by response_from. */
  responseMs: Record<Exclude<ResponseFrom, 'http'>, number>;
}

export interface ProxyHandlerDeps {
  table: () => RouteTable;
  forwarder: HttpForwarder;
  guard: JwtGuard;
  pending: PendingResponses;
  publishers: { kafka?: EventPublisher | undefined; kinesis?: EventPublisher | undefined };
  nats: NatsTarget | undefined;
  metrics: ProxyMetrics;
  requestLog: RequestLog | undefined;
  cors: CorsPolicy;
  timeouts: ProxyTimeouts;
  wrappedEventType: string;
  maxEventBytes: number;
  /** MAX_JSON_DEPTH: a published event nested deeper is refused (400). */
  maxJsonDepth: number;
  logger: Logger;
}

const notFoundLabels = { path_regex: 'N/A', target: 'N/A', response_from: 'N/A' };
const timedOut = 'Timed out while waiting for the response.';
const tracer = gatewayTracer('proxy');

export function createProxyHandler(deps: ProxyHandlerDeps) {
  // Per route and method; a route is replaced on every definition change, so old ones are dropped.
  const metricsByRoute = new WeakMap<Route, Map<string, EndpointMetrics>>();
  const metricsOf = (route: Route, method: string): EndpointMetrics => {
    let byMethod = metricsByRoute.get(route);
    if (byMethod === undefined) {
      byMethod = new Map();
      metricsByRoute.set(route, byMethod);
    }
    let metrics = byMethod.get(method);
    if (metrics === undefined) {
      const { path_regex, target, response_from } = route.endpoint;
      metrics = deps.metrics.forEndpoint({ method, path_regex, target, response_from });
      byMethod.set(method, metrics);
    }
    return metrics;
  };

  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const startedAt = performance.now();
    const method = req.method ?? 'GET';
    const path = requestPath(req);
    const hit = deps.table().match(method, path);
    if (hit === undefined) {
      answerUnmatched(req, res, method, path, deps, startedAt);
      return true;
    }
    const metrics = metricsOf(hit.route, method);
    const done = (status: RequestStatus) => metrics.done(status, startedAt);
    if (!isTracingActive()) {
      done(await handleMatched(req, res, hit, path, deps));
      return true;
    }
    const span = startHttpServerSpan(
      tracer,
      { method, path, route: hit.route.endpoint.path_regex, scheme: schemeOf(req) },
      readTraceContextFromHeaders(req.headers),
    );
    span.setAttribute('gw.api.id', hit.route.api.id);
    span.setAttribute('gw.endpoint.id', hit.route.endpoint.id);
    try {
      done(await withActiveSpan(span, () => handleMatched(req, res, hit, path, deps)));
    } finally {
      endHttpServerSpan(span, res.statusCode);
    }
    return true;
  };
}

/** A matched request: logged, its token checked when the endpoint is secured, then served. */
async function handleMatched(
  req: IncomingMessage,
  res: ServerResponse,
  hit: RouteMatch,
  path: string,
  deps: ProxyHandlerDeps,
): Promise<RequestStatus> {
  deps.requestLog?.(req, hit.route, path);
  const { endpoint } = hit.route;
  if (hit.guard !== undefined) {
    const verdict = await deps.guard.check(req, hit.guard.api.auth);
    if (verdict !== 'allowed') {
      if (verdict === 'unavailable') sendText(res, 503, 'Authentication unavailable.', unavailableHeaders());
      else
        sendText(res, 401, 'Authentication failed.', {
          ...deps.cors.headers(req),
          ...refusedTokenHeaders,
          'www-authenticate': 'Bearer',
        });
      req.resume();
      return verdict === 'unavailable' ? 'unavailable' : 'unauthorized';
    }
  }
  return endpoint.target === 'http' ? forwardHttp(req, res, hit, path, deps) : publish(req, res, hit, deps);
}

function schemeOf(req: IncomingMessage): 'http' | 'https' {
  return (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
}

function answerUnmatched(
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  path: string,
  deps: ProxyHandlerDeps,
  startedAt: number,
): void {
  req.resume();
  const preflight = method === 'OPTIONS' ? deps.table().matchPreflightTarget(path) : undefined;
  if (preflight !== undefined) {
    deps.cors.preflight(req, res, preflightRules(preflight.route.api));
    const { path_regex, target, response_from } = preflight.route.endpoint;
    deps.metrics.request({ method, path_regex, target, response_from }, 'ok', startedAt);
    return;
  }
  sendJson(res, 404, { message: 'Not Found' });
  deps.metrics.request({ method, ...notFoundLabels }, 'not_found', startedAt);
}

async function forwardHttp(
  req: IncomingMessage,
  res: ServerResponse,
  hit: RouteMatch,
  path: string,
  deps: ProxyHandlerDeps,
): Promise<RequestStatus> {
  const { route } = hit;
  const { endpoint } = route;
  const origin = route.origin!;
  let target = upstreamPath(hit, path, req.url ?? '/');
  if (target === undefined) {
    req.resume();
    deps.logger.warn(
      { path, path_replacement: endpoint.path_replacement },
      'path_replacement gave no canonical path',
    );
    sendText(res, 502, 'Bad gateway.');
    return 'unreachable';
  }
  const waiting = waitsForCorrelation(endpoint.response_from) ? openWait(res, endpoint, deps) : undefined;
  if (waiting !== undefined)
    target += `${target.includes('?') ? '&' : '?'}correlation=${encodeURIComponent(waiting.correlation)}`;
  const client = isTracingActive()
    ? startHttpClientSpan(tracer, req.method ?? 'GET', new URL(origin.origin + redactUrl(target)))
    : undefined;
  const outcome = await deps.forwarder.forward({
    req,
    res,
    origin: origin.origin,
    path: target,
    headers: upstreamHeaders(req, {
      host: origin.host,
      addHeaders: route.addHeaders,
      traceContext: client && hopTraceContext(client, undefined),
    }),
    headersTimeoutMs: endpoint.response_timeout ?? deps.timeouts.recvMs,
    ...(waiting !== undefined && { hold: (status: number) => status === 202 }),
  });
  if (client !== undefined)
    endHttpClientSpan(
      client,
      outcome.kind === 'responded' || outcome.kind === 'held' ? outcome.status : outcome.kind,
    );
  if (outcome.kind !== 'held') waiting?.cancel();
  switch (outcome.kind) {
    case 'responded':
    case 'client_gone':
      return 'ok';
    case 'held':
      return answerCorrelated(res, await waiting!.response, deps);
    case 'timeout':
      sendText(res, 504, timedOut);
      return 'request_timeout';
    case 'unreachable':
      deps.logger.warn({ err: outcome.error, origin: origin.origin, path: target }, 'target unreachable');
      sendText(res, 502, 'Bad gateway.');
      return 'unreachable';
    case 'target_refused':
      deps.logger.warn({ err: outcome.error, origin: origin.origin }, 'target address refused');
      sendText(res, 502, refusedTargetAnswer);
      return 'target_refused';
    case 'broken':
      deps.logger.warn({ err: outcome.error, origin: origin.origin }, 'target response broke off');
      return 'unreachable';
  }
}

async function publish(
  req: IncomingMessage,
  res: ServerResponse,
  { route }: RouteMatch,
  deps: ProxyHandlerDeps,
): Promise<RequestStatus> {
  const { endpoint, api } = route;
  if (req.method === 'OPTIONS') {
    req.resume();
    deps.cors.preflight(req, res, preflightRules(api));
    return 'ok';
  }
  const target = endpoint.target as 'kafka' | 'kinesis' | 'nats';
  const publisher = target === 'nats' ? deps.nats : deps.publishers[target];
  if (publisher === undefined) {
    req.resume();
    sendText(res, 503, `The ${target} target is not configured on this gateway.`);
    return 'unavailable';
  }
  const body = await readBody(req, deps.maxEventBytes);
  const waiting = waitsForCorrelation(endpoint.response_from) ? openWait(res, endpoint, deps) : undefined;
  const topic = endpoint.topic!;
  const producer = isTracingActive() ? new ProducerSpan(target, topic) : undefined;
  let event: ReturnType<typeof requestEvent>;
  try {
    event = requestEvent(req, body, {
      wrappedType: deps.wrappedEventType,
      correlation: waiting?.correlation,
      credentials: { auth: api.auth, keep: endpoint.publish_credentials === true },
      nextHop: producer?.nextHop,
    });
    assertJsonDepth(event, deps.maxJsonDepth, 'the event');
  } catch (err) {
    waiting?.cancel();
    if (
      !(
        err instanceof InvalidCloudEventError ||
        err instanceof UnsupportedCloudEventError ||
        err instanceof JsonTooDeepError
      )
    )
      throw err;
    sendText(res, err instanceof UnsupportedCloudEventError ? 415 : 400, `Bad request: ${err.message}`);
    return 'bad_request';
  }
  producer?.span?.setAttributes({
    [ATTR_CLOUDEVENTS_EVENT_ID]: event.id,
    [ATTR_CLOUDEVENTS_EVENT_TYPE]: event.type,
  });
  if (endpoint.response_from === 'nats') {
    const status = await requestOverNats(res, topic, event, endpoint.response_timeout, deps);
    producer?.end(status === 'unreachable' ? new Error('NATS request failed') : undefined);
    return status;
  }
  try {
    await publisher.publish(topic, event, endpoint.schema);
    deps.metrics.eventProduced(target, topic, true);
    producer?.end();
  } catch (err) {
    producer?.end(err);
    waiting?.cancel();
    deps.metrics.eventProduced(target, topic, false);
    if (err instanceof AvroDataMismatchError) {
      sendText(res, 400, `Bad request: ${err.message}.`);
      return 'bad_request';
    }
    if (err instanceof AvroNotConfiguredError) {
      sendText(res, 503, 'The schema registry (Avro) is not configured on this gateway.');
      return 'unavailable';
    }
    deps.logger.warn({ err, target, topic }, 'publishing a request event failed');
    const outage = unavailabilityOf(err);
    if (outage) {
      sendUnavailable(res, outage.dependency);
      return 'unavailable';
    }
    sendText(res, 502, 'Bad gateway.');
    return 'unreachable';
  }
  if (waiting !== undefined) return answerCorrelated(res, await waiting.response, deps);
  sendText(res, 202, 'Accepted.', deps.cors.headers(req));
  return 'ok';
}

async function requestOverNats(
  res: ServerResponse,
  subject: string,
  event: ReturnType<typeof requestEvent>,
  timeoutMs: number | undefined,
  deps: ProxyHandlerDeps,
): Promise<RequestStatus> {
  let reply: Awaited<ReturnType<NatsTarget['request']>>;
  try {
    reply = await deps.nats!.request(subject, event, timeoutMs ?? deps.timeouts.responseMs.nats);
  } catch (err) {
    deps.metrics.eventProduced('nats', subject, false);
    deps.logger.warn({ err, subject }, 'NATS request failed');
    const outage = unavailabilityOf(err);
    if (outage) {
      sendUnavailable(res, outage.dependency);
      return 'unavailable';
    }
    sendText(res, 502, 'Bad gateway.');
    return 'unreachable';
  }
  deps.metrics.eventProduced('nats', subject, reply.kind !== 'no_responders');
  if (reply.kind === 'timeout') {
    sendText(res, 504, timedOut, deps.cors.headers(res.req));
    return 'response_timeout';
  }
  if (reply.kind === 'no_responders') {
    sendText(res, 502, 'Bad gateway.');
    return 'unreachable';
  }
  res.writeHead(200, {
    ...deps.cors.headers(res.req),
    'content-type': reply.contentType ?? 'application/json',
    'content-length': reply.body.length,
  });
  res.end(reply.body);
  return 'ok';
}

/**
 * The PRODUCER span of a request event, started once the event is parsed (a refused body sends
 * nothing): the event then carries this span's context, and a context of another trace that the
 * event brought in its body becomes a link.
 */
class ProducerSpan {
  span: Span | undefined;
  private readonly system: string;
  private readonly topic: string;

  constructor(system: string, topic: string) {
    this.system = system;
    this.topic = topic;
  }

  nextHop = (carried: TraceContext | undefined): TraceContext => {
    this.span = startProducerSpan(tracer, { system: this.system, destination: this.topic });
    linkOtherTrace(this.span, carried);
    return hopTraceContext(this.span, undefined);
  };

  end(error?: unknown): void {
    if (this.span !== undefined) endSpan(this.span, error);
  }
}

/** Registers the wait; a client that leaves stops it. */
function openWait(res: ServerResponse, endpoint: Route['endpoint'], deps: ProxyHandlerDeps): PendingRequest {
  const source = endpoint.response_from as Exclude<ResponseFrom, 'http'>;
  const waiting = deps.pending.open(endpoint.response_timeout ?? deps.timeouts.responseMs[source]);
  res.once('close', waiting.cancel);
  return waiting;
}

function answerCorrelated(
  res: ServerResponse,
  response: CorrelatedResponse | undefined,
  deps: ProxyHandlerDeps,
): RequestStatus {
  if (res.destroyed) return 'ok';
  if (response === undefined) {
    sendText(res, 504, timedOut, deps.cors.headers(res.req));
    return 'response_timeout';
  }
  res.writeHead(response.status, {
    ...response.headers,
    ...deps.cors.headers(res.req),
    'content-length': response.body.length,
  });
  res.end(response.body);
  return 'ok';
}
