/**
 * What every stage of the request pipeline shares: the engine's parts (`PipelineContext`) and one
 * request to a declared endpoint while it is being answered (`Exchange`). `openExchange` is the
 * step between routing and the body: cookies out of the headers, the endpoint's request header
 * transform, correlation and trace ids, and the HttpRequestData the target will see.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { FlowRunner } from '@gatehouse/flows';
import type { HttpRequestData } from '@gatehouse/functions';
import type { Logger } from '@gatehouse/service-kit';
import type { Tracer } from '@opentelemetry/api';
import { parseCookies } from '../cookies.ts';
import type { Endpoint } from '../endpoint.ts';
import type { FunctionRegistry } from '../function-registry.ts';
import { transformHeaders } from '../header-transform.ts';
import { parseQueryString } from '../query-string.ts';
import type { ResponseTarget } from '../response-writer.ts';
import type { RestMetrics } from '../rest-metrics.ts';
import type { RouteTable } from '../route-table.ts';
import type { StaticContentConfig } from '../static-content-config.ts';
import type { StaticFolder } from '../static-files.ts';
import { newCorrelationId, newId, parseTraceparent } from '../trace-context.ts';
import { RequestTrace } from '../trace-recorder.ts';
import { corsHeaders } from './cors-stage.ts';
import { type Target, targetOf } from './targets/target.ts';

export interface PipelineContext {
  table: RouteTable<Endpoint>;
  registry: FunctionRegistry;
  /** The flow engine, for `http.flow.adapter` endpoints. */
  flows: FlowRunner | undefined;
  staticFolder: StaticFolder | undefined;
  staticRules: StaticContentConfig;
  maxBodySize: number;
  /** MAX_JSON_DEPTH: a JSON, XML or form body nested deeper is refused (400). */
  maxJsonDepth: number;
  /** Id of this engine instance (`origin` of trace records). */
  origin: string;
  logger: Logger;
  metrics: RestMetrics;
  tracer: Tracer;
}

/** One request to a declared endpoint, while it is being answered. */
export interface Exchange extends ResponseTarget {
  endpoint: Endpoint;
  /** What answers the endpoint: a function, a flow, or the HTTP relay. */
  target: Target;
  startedAt: number;
  /** Set once a response has been written (or the timeout answered first). */
  done: boolean;
  timer: NodeJS.Timeout | undefined;
  /** Fires when the endpoint times out, for targets that can stop work in flight. */
  abort: AbortController | undefined;
  trace: RequestTrace | undefined;
  cid: string;
}

/** The exchange and the request data for a request that matched `endpoint`. */
export function openExchange(
  ctx: PipelineContext,
  req: IncomingMessage,
  res: ServerResponse,
  endpoint: Endpoint,
  params: Record<string, string> | undefined,
  path: string,
  queryString: string,
  startedAt: number,
): { x: Exchange; data: HttpRequestData } {
  const method = req.method!;
  const headers = req.headers as Record<string, string>;
  const responseHeaders: OutgoingHttpHeaders = corsHeaders(endpoint);

  let cookies: Record<string, string> | undefined;
  if (headers['cookie'] !== undefined) {
    cookies = parseCookies(headers['cookie']);
    delete headers['cookie'];
  }
  if (endpoint.headers?.request) transformHeaders(headers, endpoint.headers.request, (s) => s);
  if (endpoint.flow !== undefined) headers['x-flow-id'] = endpoint.flow;

  let cid = headers[endpoint.correlationIdHeader];
  const cidGenerated = !cid;
  let trace: RequestTrace | undefined;
  if (endpoint.tracing) {
    trace = startTrace(ctx, endpoint, headers, method, path, queryString);
    // One id, not two, when the trace and correlation headers are the same header.
    if (cidGenerated && endpoint.traceIdHeader === endpoint.correlationIdHeader) cid = trace.id;
  }
  if (!cid) cid = newCorrelationId();
  if (cidGenerated) headers[endpoint.correlationIdHeader] = cid;
  responseHeaders[endpoint.correlationIdHeader] = cid;

  const target = targetOf(endpoint);
  const x: Exchange = {
    res,
    head: method === 'HEAD',
    accept: headers['accept'],
    headers: responseHeaders,
    responseTransform: endpoint.headers?.response,
    endpoint,
    target,
    startedAt,
    done: false,
    timer: undefined,
    abort: target.abortable ? new AbortController() : undefined,
    trace,
    cid,
  };
  const data: HttpRequestData = {
    method,
    url: path.includes('%') ? safeDecode(path) : path,
    ip: req.socket.remoteAddress ?? '',
    https: headers['x-forwarded-proto'] === 'https' || (req.socket as TLSSocket).encrypted === true,
    headers,
    cookies,
    pathParameters: params,
    queryParameters: queryString === '' ? undefined : parseQueryString(queryString),
    queryString,
    timeoutSeconds: endpoint.timeoutMs / 1000,
  };
  return { x, data };
}

/** The headers every event of the exchange carries (route, correlation and trace ids). */
export function eventHeaders(route: string, x: Exchange): Record<string, string> {
  const headers: Record<string, string> = { my_route: route, my_correlation_id: x.cid };
  if (x.trace) {
    headers['my_trace_id'] = x.trace.id;
    headers['my_trace_path'] = x.trace.path;
  }
  return headers;
}

function startTrace(
  ctx: PipelineContext,
  endpoint: Endpoint,
  headers: Record<string, string>,
  method: string,
  path: string,
  queryString: string,
): RequestTrace {
  // A well-formed W3C traceparent wins; then the custom carrier; then the trace-id header.
  const parent =
    parseTraceparent(headers['traceparent']) ??
    (endpoint.traceparentHeader !== 'traceparent'
      ? parseTraceparent(headers[endpoint.traceparentHeader])
      : undefined);
  const id = parent?.traceId ?? (headers[endpoint.traceIdHeader] || newId());
  const tracePath = `${method} ${path.includes('%') ? safeDecode(path) : path}${queryString ? `?${queryString}` : ''}`;
  return new RequestTrace(ctx.tracer, ctx.logger, ctx.origin, id, tracePath, parent?.parentSpanId);
}

export function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}
