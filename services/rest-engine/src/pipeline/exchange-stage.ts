/**
 * The exchange stage, between routing and the body: cookies out of the headers, the endpoint's
 * request header transform, correlation and trace ids, the CORS headers every answer carries, and
 * the HttpRequestData the target will see. It opens the Exchange the later stages share.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { HttpRequestData } from '@gatehouse/functions';
import { clientAddress, redactQuery, requestScheme } from '@gatehouse/service-kit';
import { parseCookies, parseQueryString } from '../http/index.ts';
import { type Endpoint, transformHeaders } from '../endpoints/index.ts';
import { newCorrelationId, newId, parseTraceparent, RequestTrace } from '../tracing/index.ts';
import { corsHeaders } from './cors-stage.ts';
import type { Exchange } from './exchange.ts';
import type { PipelineContext } from './pipeline-context.ts';
import { abandon } from './respond-stage.ts';
import { targetOf } from './targets/index.ts';

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
  if (x.abort) res.once('close', () => abandon(x));
  const data: HttpRequestData = {
    method,
    // The canonical path (request-pipeline.ts), as routed and as a relay forwards it; only path
    // variables are decoded, per segment (route-table.ts).
    url: path,
    ip: clientAddress(req, ctx.trustedProxies),
    https: requestScheme(req, ctx.trustedProxies) === 'https',
    headers,
    cookies,
    pathParameters: params,
    queryParameters: queryString === '' ? undefined : parseQueryString(queryString),
    queryString,
    timeoutSeconds: endpoint.timeoutMs / 1000,
  };
  return { x, data };
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
  // Trace records and spans are read by whoever reads logs: no credential of the query in them.
  const tracePath = `${method} ${path}${queryString ? `?${redactQuery(queryString)}` : ''}`;
  return new RequestTrace(ctx.tracer, ctx.logger, ctx.origin, id, tracePath, parent?.parentSpanId);
}
