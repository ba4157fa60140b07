/**
 * What happens to one request. Declared endpoints: match → CORS headers → request header
 * transform → correlation and trace ids → body → authentication → primary function (secondaries
 * get a copy, fire-and-forget) → response, with a 408 when the endpoint's timeout passes first.
 * Otherwise: OPTIONS preflight from the endpoint's CORS set, static content for GET and HEAD, and
 * 404 / 405 error bodies.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import {
  AsyncHttpRequest,
  type HttpRequestData,
  isAppException,
  isEventEnvelope,
} from '@gatehouse/functions';
import type { Logger } from '@gatehouse/service-kit';
import { HttpError } from '@gatehouse/service-kit';
import type { Tracer } from '@opentelemetry/api';
import { judgeAuthResult, selectAuthRoute } from './authentication.ts';
import { readRequestBody } from './body-reader.ts';
import { responseRoute } from './builtin-functions.ts';
import { parseCookies } from './cookies.ts';
import { describeTimeout } from './endpoint-timeout.ts';
import type { Endpoint } from './endpoint.ts';
import { errorMessages } from './error-renderer.ts';
import type { FunctionRegistry } from './function-registry.ts';
import { transformHeaders } from './header-transform.ts';
import { relay } from './http-relay.ts';
import { parseQueryString } from './query-string.ts';
import type { RestMetrics } from './rest-metrics.ts';
import { type ResponseTarget, writeError, writeResult } from './response-writer.ts';
import type { RouteTable } from './route-table.ts';
import type { StaticContentConfig } from './static-content-config.ts';
import { etagMatches, type StaticFolder } from './static-files.ts';
import { newCorrelationId, newId, parseTraceparent } from './trace-context.ts';
import { RequestTrace, type TraceStep } from './trace-recorder.ts';

export interface PipelineOptions {
  table: RouteTable<Endpoint>;
  registry: FunctionRegistry;
  staticFolder: StaticFolder | undefined;
  staticRules: StaticContentConfig;
  maxBodySize: number;
  /** Id of this engine instance (`origin` of trace records). */
  origin: string;
  logger: Logger;
  metrics: RestMetrics;
  tracer: Tracer;
}

/** One request to a declared endpoint, while it is being answered. */
interface Exchange extends ResponseTarget {
  endpoint: Endpoint;
  startedAt: number;
  /** Set once a response has been written (or the timeout answered first). */
  done: boolean;
  timer: NodeJS.Timeout | undefined;
  abort: AbortController | undefined;
  trace: RequestTrace | undefined;
  cid: string;
}

const filterTimeoutMs = 10_000;
const bodyMethods = new Set(['POST', 'PUT', 'PATCH']);
const noCacheHeaders = {
  'cache-control': 'no-cache, no-store',
  pragma: 'no-cache',
  expires: 'Thu, 01 Jan 1970 00:00:00 GMT',
};

export class RequestPipeline {
  private readonly o: PipelineOptions;

  constructor(options: PipelineOptions) {
    this.o = options;
  }

  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    const startedAt = performance.now();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const method = req.method ?? 'GET';
    const found = this.o.table.lookup(method, path);
    if (found.kind === 'found') {
      try {
        this.serveEndpoint(
          req,
          res,
          found.endpoint,
          found.params,
          path,
          q < 0 ? '' : url.slice(q + 1),
          startedAt,
        );
      } catch (err) {
        this.failed(res, err, startedAt);
      }
      return;
    }
    if (found.kind === 'method-not-allowed') {
      if (method === 'OPTIONS') this.preflight(req, res, found.endpoints, startedAt);
      else
        this.plainError(req, res, 405, errorMessages.methodNotAllowed, startedAt, allowOf(found.endpoints));
      return;
    }
    if (found.kind === 'bad-path') {
      this.plainError(req, res, 400, errorMessages.badPath, startedAt);
      return;
    }
    if ((method === 'GET' || method === 'HEAD') && this.o.staticFolder) {
      this.serveStatic(req, res, path, url.slice(path.length + 1), startedAt).catch((err: unknown) =>
        this.failed(res, err, startedAt),
      );
      return;
    }
    this.plainError(req, res, 404, errorMessages.notFound, startedAt);
  };

  private serveEndpoint(
    req: IncomingMessage,
    res: ServerResponse,
    endpoint: Endpoint,
    params: Record<string, string> | undefined,
    path: string,
    queryString: string,
    startedAt: number,
  ): void {
    const method = req.method!;
    const headers = req.headers as Record<string, string>;
    const responseHeaders: OutgoingHttpHeaders = {};
    if (endpoint.cors) for (const [name, value] of endpoint.cors.headers) responseHeaders[name] = value;

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
      trace = this.startTrace(endpoint, headers, method, path, queryString);
      // One id, not two, when the trace and correlation headers are the same header.
      if (cidGenerated && endpoint.traceIdHeader === endpoint.correlationIdHeader) cid = trace.id;
    }
    if (!cid) cid = newCorrelationId();
    if (cidGenerated) headers[endpoint.correlationIdHeader] = cid;
    responseHeaders[endpoint.correlationIdHeader] = cid;

    const x: Exchange = {
      res,
      head: method === 'HEAD',
      accept: headers['accept'],
      headers: responseHeaders,
      responseTransform: endpoint.headers?.response,
      endpoint,
      startedAt,
      done: false,
      timer: undefined,
      abort: endpoint.relay ? new AbortController() : undefined,
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
    if (bodyMethods.has(method) || endpoint.authentication) {
      // Reading the body and authenticating take time: the endpoint timeout covers them too.
      x.timer = setTimeout(onTimeout, endpoint.timeoutMs, this, x);
      this.readAndAuthenticate(req, x, data).catch((err: unknown) => {
        this.o.logger.error({ err, endpoint: endpoint.label }, 'request failed');
        this.answerError(x, 500, 'Internal error');
      });
      return;
    }
    this.runPrimary(x, data, new AsyncHttpRequest(data), 'http.request', undefined);
  }

  private async readAndAuthenticate(req: IncomingMessage, x: Exchange, data: HttpRequestData): Promise<void> {
    const { endpoint, res } = x;
    if (bodyMethods.has(data.method)) {
      try {
        const parsed = await readRequestBody(req, {
          limit: this.o.maxBodySize,
          upload: endpoint.upload,
          raw: endpoint.relay !== undefined,
          onStreamTooLarge: (err) => {
            // The caller is still sending: answer, then close rather than read the rest.
            res.shouldKeepAlive = false;
            this.answerError(x, err.status, err.message);
          },
        });
        data.body = parsed.body;
        data.contentLength = parsed.contentLength;
        data.stream = parsed.stream;
        data.streamRoute = parsed.streamRoute;
        data.files = parsed.files;
        if (parsed.formFields) data.queryParameters = { ...data.queryParameters, ...parsed.formFields };
      } catch (err) {
        const status = err instanceof HttpError ? err.status : 400;
        if (status === 413) res.shouldKeepAlive = false;
        this.answerError(x, status, (err as Error).message);
        return;
      }
      if (x.done) return;
    }
    const request = new AsyncHttpRequest(data);
    if (!endpoint.authentication) {
      this.runPrimary(x, data, request, 'http.request', undefined);
      return;
    }
    const route = selectAuthRoute(endpoint.authentication, data.headers);
    const step = x.trace?.begin(route, 'http.request', undefined);
    const verdict = await this.authenticate(x, route, request, step);
    if (!verdict) return;
    data.session = verdict.session;
    this.runPrimary(x, data, request, route, step);
  }

  /**
   * Sends the request to the secondaries (fire-and-forget) and the primary. A function that answers
   * synchronously is answered at once; otherwise the endpoint timeout runs until it does.
   */
  private runPrimary(
    x: Exchange,
    data: HttpRequestData,
    request: AsyncHttpRequest,
    from: string,
    parent: TraceStep | undefined,
  ): void {
    const endpoint = x.endpoint;
    // The primary's step first: without an authentication step it is the request's SERVER span.
    const step = x.trace?.begin(endpoint.primary, from, parent);
    for (const secondary of endpoint.secondaries) this.fireAndForget(x, secondary, from, parent, request);
    let result: unknown;
    try {
      result = endpoint.relay
        ? relay(endpoint.relay, {
            method: data.method,
            path: data.url,
            queryString: data.queryString || undefined,
            headers: data.headers,
            session: data.session,
            body: (data.body as Buffer | undefined) ?? data.stream,
            signal: x.abort!.signal,
          })
        : this.o.registry.call(endpoint.primary, this.eventHeaders(endpoint.primary, x), request);
    } catch (err) {
      this.primaryFailed(x, step, err);
      return;
    }
    if (isThenable(result)) {
      x.timer ??= setTimeout(onTimeout, endpoint.timeoutMs, this, x);
      result.then(
        (value) => this.primaryAnswered(x, step, value),
        (err: unknown) => this.primaryFailed(x, step, err),
      );
    } else {
      this.primaryAnswered(x, step, result);
    }
  }

  private primaryAnswered(x: Exchange, step: TraceStep | undefined, result: unknown): void {
    const route = x.endpoint.primary;
    this.o.metrics.functionCall(route, x.done ? 'timeout' : 'ok');
    if (step) x.trace!.end(step, isEventEnvelope(result) ? (result.getStatus() ?? 200) : 200);
    if (x.done) {
      // Answered 408 already: the late record still belongs to the trace.
      x.trace?.flush();
      return;
    }
    this.finish(x, () => writeResult(x, result), step);
  }

  private primaryFailed(x: Exchange, step: TraceStep | undefined, err: unknown): void {
    const route = x.endpoint.primary;
    const { status, message } = this.failure(route, err, x);
    if (step) x.trace!.end(step, status, message);
    this.o.metrics.functionCall(route, 'error');
    if (!x.done) this.answerError(x, status, message, step);
    else x.trace?.flush();
  }

  /** Returns the session verdict, or undefined after answering the rejection. */
  private async authenticate(
    x: Exchange,
    route: string,
    request: AsyncHttpRequest,
    step: TraceStep | undefined,
  ): Promise<{ session: Record<string, string> | undefined } | undefined> {
    let result: unknown;
    try {
      result = await this.o.registry.invoke(route, this.eventHeaders(route, x), request);
    } catch (err) {
      const chosen = isAppException(err) ? { status: err.status, message: err.message } : undefined;
      if (!chosen) this.o.logger.warn({ err, route }, 'authentication function failed: request rejected');
      const status = chosen?.status ?? 401;
      if (step) x.trace!.end(step, status, (err as Error).message);
      if (!x.done) this.answerError(x, status, chosen?.message ?? errorMessages.unauthorized, step);
      return undefined;
    }
    const verdict = judgeAuthResult(result);
    if (step) x.trace!.end(step, verdict.accepted ? 200 : 401);
    if (x.done) return undefined;
    if (!verdict.accepted) {
      this.answerError(x, 401, errorMessages.unauthorized, step);
      return undefined;
    }
    return verdict;
  }

  private fireAndForget(
    x: Exchange,
    route: string,
    from: string,
    parent: TraceStep | undefined,
    request: AsyncHttpRequest,
  ): void {
    const step = x.trace?.begin(route, from, parent);
    this.o.registry.invoke(route, this.eventHeaders(route, x), request).then(
      () => {
        if (step) x.trace!.end(step, 200);
      },
      (err: unknown) => {
        if (step) x.trace!.end(step, isAppException(err) ? err.status : 500, (err as Error).message);
        this.o.logger.warn({ err, route }, 'secondary function failed');
      },
    );
  }

  private eventHeaders(route: string, x: Exchange): Record<string, string> {
    const headers: Record<string, string> = { my_route: route, my_correlation_id: x.cid };
    if (x.trace) {
      headers['my_trace_id'] = x.trace.id;
      headers['my_trace_path'] = x.trace.path;
    }
    return headers;
  }

  private startTrace(
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
    return new RequestTrace(this.o.tracer, this.o.logger, this.o.origin, id, tracePath, parent?.parentSpanId);
  }

  /** Status and message for a function's failure; unexpected errors are logged. */
  private failure(route: string, err: unknown, x: Exchange): { status: number; message: string } {
    if (isAppException(err)) return { status: err.status, message: err.message };
    if (x.done) return { status: 408, message: (err as Error)?.message ?? String(err) };
    this.o.logger.error({ err, route, endpoint: x.endpoint.label }, 'function failed');
    const message = err instanceof Error ? err.message : String(err);
    return { status: 500, message: message || 'Internal error' };
  }

  /** Answers through the response writer, recording the `async.http.response` step. */
  private finish(x: Exchange, write: () => number, parent: TraceStep | undefined): void {
    x.done = true;
    clearTimeout(x.timer);
    const step = x.trace?.begin(responseRoute, parent?.service ?? 'http.request', parent);
    let status: number;
    try {
      status = write();
    } catch (err) {
      this.o.logger.error({ err, endpoint: x.endpoint.label }, 'response could not be written');
      if (!x.res.headersSent) status = writeError(x, 500, 'Response could not be rendered');
      else {
        x.res.destroy();
        status = 500;
      }
    }
    this.o.metrics.answered(status, x.startedAt);
    if (x.trace) {
      x.trace.end(step!, status);
      x.trace.flush();
    }
  }

  answerError(x: Exchange, status: number, message: string, parent?: TraceStep): void {
    if (x.done) return;
    this.finish(x, () => writeError(x, status, message), parent);
  }

  private preflight(
    req: IncomingMessage,
    res: ServerResponse,
    endpoints: Endpoint[],
    startedAt: number,
  ): void {
    const cors = endpoints.find((e) => e.cors && e.cors.options.length > 0)?.cors;
    if (!cors) {
      this.plainError(req, res, 405, errorMessages.methodNotAllowed, startedAt, allowOf(endpoints));
      return;
    }
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of cors.options) headers[name] = value;
    res.writeHead(204, headers);
    res.end();
    this.o.metrics.answered(204, startedAt);
  }

  private async serveStatic(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    queryString: string,
    startedAt: number,
  ): Promise<void> {
    const file = await this.o.staticFolder!.find(path);
    if (!file) {
      if (/(^|\/|\\)\.\.($|\/|\\)|%2e%2e/i.test(path))
        this.o.logger.warn({ path }, 'Reject path traversal attack');
      this.plainError(req, res, 404, errorMessages.notFound, startedAt);
      return;
    }
    const decodedPath = path.includes('%') ? safeDecode(path) : path;
    const headers: OutgoingHttpHeaders = {};
    const filter = this.o.staticRules.filter;
    if (filter?.applies(decodedPath)) {
      const stop = await this.runFilter(
        req,
        res,
        filter.service,
        decodedPath,
        queryString,
        headers,
        startedAt,
      );
      if (stop) return;
    }
    headers['content-type'] = file.contentType;
    let status = 200;
    if (this.o.staticRules.noCache(decodedPath)) {
      Object.assign(headers, noCacheHeaders);
    } else {
      headers['etag'] = file.etag;
      if (etagMatches(req.headers['if-none-match'], file.etag)) status = 304;
    }
    headers['content-length'] = status === 304 ? 0 : file.body.length;
    res.writeHead(status, headers);
    if (status === 304 || req.method === 'HEAD') res.end();
    else res.end(file.body);
    this.o.metrics.answered(status, startedAt);
  }

  /** Runs the static-content filter; returns true when it answered the request itself. */
  private async runFilter(
    req: IncomingMessage,
    res: ServerResponse,
    route: string,
    path: string,
    queryString: string,
    headers: OutgoingHttpHeaders,
    startedAt: number,
  ): Promise<boolean> {
    const reqHeaders = { ...(req.headers as Record<string, string>) };
    const cookies = parseCookies(reqHeaders['cookie']);
    delete reqHeaders['cookie'];
    const request = new AsyncHttpRequest({
      method: req.method!,
      url: path,
      ip: req.socket.remoteAddress ?? '',
      https: reqHeaders['x-forwarded-proto'] === 'https',
      headers: reqHeaders,
      cookies,
      queryParameters: queryString ? parseQueryString(queryString) : undefined,
      queryString,
      timeoutSeconds: filterTimeoutMs / 1000,
    });
    const target: ResponseTarget = {
      res,
      head: req.method === 'HEAD',
      accept: reqHeaders['accept'],
      headers,
      responseTransform: undefined,
    };
    let timer: NodeJS.Timeout | undefined;
    try {
      const result = await Promise.race([
        this.o.registry.invoke(route, { my_route: route }, request),
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new HttpError(408, `Timeout for ${describeTimeout(filterTimeoutMs)}`)),
            filterTimeoutMs,
          );
        }),
      ]);
      if (!isEventEnvelope(result)) return false;
      const status = result.getStatus() ?? 200;
      if (status === 200) {
        for (const [name, value] of Object.entries(result.getHeaders())) {
          if (!name.startsWith('my_') && name !== 'content-type') headers[name] = value;
        }
        return false;
      }
      this.o.metrics.answered(writeResult(target, result), startedAt);
      return true;
    } catch (err) {
      const status = isAppException(err) || err instanceof HttpError ? err.status : 500;
      if (status === 500) this.o.logger.error({ err, route }, 'static content filter failed');
      this.o.metrics.answered(writeError(target, status, (err as Error).message), startedAt);
      return true;
    } finally {
      clearTimeout(timer);
    }
  }

  private plainError(
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    message: string,
    startedAt: number,
    allow?: string,
  ): void {
    const headers: OutgoingHttpHeaders = allow ? { allow } : {};
    const target: ResponseTarget = {
      res,
      head: req.method === 'HEAD',
      accept: req.headers.accept,
      headers,
      responseTransform: undefined,
    };
    this.o.metrics.answered(writeError(target, status, message), startedAt);
  }

  private failed(res: ServerResponse, err: unknown, startedAt: number): void {
    this.o.logger.error({ err }, 'request failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ message: 'Internal error', type: 'error', status: 500 }));
    this.o.metrics.answered(500, startedAt);
  }
}

function onTimeout(pipeline: RequestPipeline, x: Exchange): void {
  if (x.done) return;
  x.abort?.abort();
  pipeline.answerError(x, 408, `Timeout for ${describeTimeout(x.endpoint.timeoutMs)}`);
}

function allowOf(endpoints: Endpoint[]): string {
  const methods = new Set(endpoints.flatMap((e) => e.methods));
  if (endpoints.some((e) => e.cors)) methods.add('OPTIONS');
  return [...methods].join(', ');
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
