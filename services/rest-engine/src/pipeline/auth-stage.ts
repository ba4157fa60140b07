/**
 * The authentication stage: the endpoint's authentication function (picked by the selector) judges
 * the request; a rejection is answered here (401, or the status of an AppException it threw), an
 * acceptance hands its session information on to the target.
 */
import { type AsyncHttpRequest, isAppException } from '@gatehouse/functions';
import { judgeAuthResult } from '../endpoints/index.ts';
import { errorMessages } from '../http/index.ts';
import type { TraceStep } from '../tracing/index.ts';
import { eventHeaders } from './event-headers.ts';
import type { Exchange } from './exchange.ts';
import type { PipelineContext } from './pipeline-context.ts';
import { answerError } from './respond-stage.ts';

/** Returns the session verdict, or undefined after answering the rejection. */
export async function authenticate(
  ctx: PipelineContext,
  x: Exchange,
  route: string,
  request: AsyncHttpRequest,
  step: TraceStep | undefined,
): Promise<{ session: Record<string, string> | undefined } | undefined> {
  let result: unknown;
  try {
    result = await ctx.registry.invoke(route, eventHeaders(route, x), request);
  } catch (err) {
    const chosen = isAppException(err) ? { status: err.status, message: err.message } : undefined;
    if (!chosen) ctx.logger.warn({ err, route }, 'authentication function failed: request rejected');
    const status = chosen?.status ?? 401;
    if (step) x.trace!.end(step, status, (err as Error).message);
    if (!x.done) answerError(ctx, x, status, chosen?.message ?? errorMessages.unauthorized, step);
    return undefined;
  }
  const verdict = judgeAuthResult(result);
  if (step) x.trace!.end(step, verdict.accepted ? 200 : 401);
  if (x.done) return undefined;
  if (!verdict.accepted) {
    answerError(ctx, x, 401, errorMessages.unauthorized, step);
    return undefined;
  }
  return verdict;
}
