/**
 * The target stage: the secondaries get the request (fire-and-forget), the endpoint's target
 * (function, flow or relay, see targets/target.ts) answers it. A target that answers synchronously
 * is answered at once; otherwise the endpoint timeout runs until it does.
 */
import {
  type AsyncHttpRequest,
  type HttpRequestData,
  isAppException,
  isEventEnvelope,
  isThenable,
} from '@gatehouse/functions';
import { selectAuthRoute } from '../endpoints/index.ts';
import type { TraceStep } from '../tracing/index.ts';
import { eventHeaders } from './event-headers.ts';
import type { Exchange } from './exchange.ts';
import type { PipelineContext } from './pipeline-context.ts';
import { answerError, answerResult, restartTimer, startTimer } from './respond-stage.ts';
import type { TargetCall } from './targets/index.ts';

/**
 * The route of the function target or of the authentication service the request would use, when
 * no function has it (an entry Mercury keeps: a 503 before the body is read, not a 404).
 */
export function unreachableService(
  ctx: PipelineContext,
  x: Exchange,
  headers: Record<string, string>,
): string | undefined {
  const { endpoint } = x;
  if (x.target.kind === 'function' && !ctx.registry.has(endpoint.primary)) return endpoint.primary;
  if (!endpoint.authentication) return undefined;
  const authRoute = selectAuthRoute(endpoint.authentication, headers);
  return ctx.registry.has(authRoute) ? undefined : authRoute;
}

export function runTarget(
  ctx: PipelineContext,
  x: Exchange,
  data: HttpRequestData,
  request: AsyncHttpRequest,
  from: string,
  parent: TraceStep | undefined,
): void {
  const endpoint = x.endpoint;
  // The primary's step first: without an authentication step it is the request's SERVER span.
  const step = x.trace?.begin(endpoint.primary, from, parent);
  for (const secondary of endpoint.secondaries) fireAndForget(ctx, x, secondary, from, parent, request);
  const call: TargetCall = {
    endpoint,
    data,
    request,
    cid: x.cid,
    trace: x.trace,
    step,
    signal: x.abort?.signal,
  };
  const waitMs = x.target.waitMs?.(ctx, call);
  let result: unknown;
  try {
    result = x.target.run(ctx, call);
  } catch (err) {
    targetFailed(ctx, x, step, err);
    return;
  }
  if (isThenable(result)) {
    // Only a target still running needs the endpoint's timer (a flow's runs past its deadline).
    if (waitMs !== undefined) restartTimer(ctx, x, waitMs);
    else startTimer(ctx, x);
    result.then(
      (value) => targetAnswered(ctx, x, step, value),
      (err: unknown) => targetFailed(ctx, x, step, err),
    );
  } else {
    targetAnswered(ctx, x, step, result);
  }
}

function targetAnswered(
  ctx: PipelineContext,
  x: Exchange,
  step: TraceStep | undefined,
  result: unknown,
): void {
  const route = x.endpoint.primary;
  ctx.metrics.functionCall(route, x.done ? 'timeout' : 'ok');
  if (step) x.trace!.end(step, isEventEnvelope(result) ? (result.getStatus() ?? 200) : 200);
  if (x.done) {
    // Answered 408 already: the late record still belongs to the trace.
    x.trace?.flush();
    return;
  }
  answerResult(ctx, x, result, step);
}

function targetFailed(ctx: PipelineContext, x: Exchange, step: TraceStep | undefined, err: unknown): void {
  const route = x.endpoint.primary;
  const { status, message } = failure(ctx, route, err, x);
  if (step) x.trace!.end(step, status, message);
  ctx.metrics.functionCall(route, 'error');
  if (!x.done) answerError(ctx, x, status, message, step);
  else x.trace?.flush();
}

/** Status and message for a target's failure; unexpected errors are logged. */
function failure(
  ctx: PipelineContext,
  route: string,
  err: unknown,
  x: Exchange,
): { status: number; message: string } {
  if (isAppException(err)) return { status: err.status, message: err.message };
  if (x.done) return { status: 408, message: (err as Error)?.message ?? String(err) };
  ctx.logger.error({ err, route, endpoint: x.endpoint.label }, 'function failed');
  const message = err instanceof Error ? err.message : String(err);
  return { status: 500, message: message || 'Internal error' };
}

function fireAndForget(
  ctx: PipelineContext,
  x: Exchange,
  route: string,
  from: string,
  parent: TraceStep | undefined,
  request: AsyncHttpRequest,
): void {
  const step = x.trace?.begin(route, from, parent);
  ctx.registry.invoke(route, eventHeaders(route, x), request).then(
    () => {
      if (step) x.trace!.end(step, 200);
    },
    (err: unknown) => {
      if (step) x.trace!.end(step, isAppException(err) ? err.status : 500, (err as Error).message);
      ctx.logger.warn({ err, route }, 'secondary function failed');
    },
  );
}
