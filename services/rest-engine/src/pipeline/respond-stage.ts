/**
 * The respond stage: every answer goes out here, once. For an exchange it stops the timeout timer,
 * writes through the response writer (the `async.http.response` trace step) and counts the answer;
 * `plainError` answers requests that matched no endpoint; `failed` is the last resort when a stage
 * threw.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { lingerThenClose } from '@gatehouse/service-kit';
import { responseRoute } from '../functions/index.ts';
import { describeTimeout, type Endpoint } from '../endpoints/index.ts';
import { type ResponseTarget, writeError, writeResult } from '../http/index.ts';
import type { TraceStep } from '../tracing/index.ts';
import type { Exchange } from './exchange.ts';
import type { PipelineContext } from './pipeline-context.ts';

/** Writes the target's answer. */
export function answerResult(ctx: PipelineContext, x: Exchange, result: unknown, parent?: TraceStep): void {
  finish(ctx, x, () => writeResult(x, result), parent);
}

/** Writes the standard error body, unless the exchange has been answered already. */
export function answerError(
  ctx: PipelineContext,
  x: Exchange,
  status: number,
  message: string,
  parent?: TraceStep,
): void {
  if (x.done) return;
  finish(ctx, x, () => writeError(x, status, message), parent);
}

/** The endpoint's timer: a 408 when the answer has not come in time; the target is aborted. */
function onTimeout(ctx: PipelineContext, x: Exchange): void {
  if (x.done) return;
  x.abort?.abort();
  answerError(ctx, x, 408, `Timeout for ${describeTimeout(x.endpoint.timeoutMs)}`);
}

/**
 * The client left before its answer was written: there is nobody to answer, and the target stops
 * what it still does for it (a relay's upstream request, held no longer than the client is).
 */
export function abandon(x: Exchange): void {
  if (x.done) return;
  x.done = true;
  clearTimeout(x.timer);
  x.abort?.abort();
}

export function startTimer(ctx: PipelineContext, x: Exchange): void {
  x.timer ??= setTimeout(onTimeout, x.endpoint.timeoutMs, ctx, x);
}

/** The endpoint's timer starts again with `ms` (a target that answers its own timeout first). */
export function restartTimer(ctx: PipelineContext, x: Exchange, ms: number): void {
  clearTimeout(x.timer);
  x.timer = setTimeout(onTimeout, ms, ctx, x);
}

function finish(ctx: PipelineContext, x: Exchange, write: () => number, parent: TraceStep | undefined): void {
  x.done = true;
  clearTimeout(x.timer);
  // Answered before the body ended (413, 400, 408, or a function that did not wait for it): the
  // rest is dropped for a moment, so the client hears the answer, and the connection then closed.
  lingerThenClose(x.res.req);
  const step = x.trace?.begin(responseRoute, parent?.service ?? 'http.request', parent);
  let status: number;
  try {
    status = write();
  } catch (err) {
    ctx.logger.error({ err, endpoint: x.endpoint.label }, 'response could not be written');
    if (!x.res.headersSent) status = writeError(x, 500, 'Response could not be rendered');
    else {
      x.res.destroy();
      status = 500;
    }
  }
  ctx.metrics.answered(status, x.startedAt);
  if (x.trace) {
    x.trace.end(step!, status);
    x.trace.flush();
  }
}

/** An error for a request that matched no endpoint (404, 405, 400). */
export function plainError(
  ctx: PipelineContext,
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
  ctx.metrics.answered(writeError(target, status, message), startedAt);
}

/** A stage threw: 500 if nothing was sent yet, else the connection is cut. */
export function failed(ctx: PipelineContext, res: ServerResponse, err: unknown, startedAt: number): void {
  ctx.logger.error({ err }, 'request failed');
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(500, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ message: 'Internal error', type: 'error', status: 500 }));
  ctx.metrics.answered(500, startedAt);
}

/** The Allow header of a 405: the endpoints' methods, and OPTIONS when one has CORS. */
export function allowOf(endpoints: Endpoint[]): string {
  const methods = new Set(endpoints.flatMap((e) => e.methods));
  if (endpoints.some((e) => e.cors)) methods.add('OPTIONS');
  return [...methods].join(', ');
}
