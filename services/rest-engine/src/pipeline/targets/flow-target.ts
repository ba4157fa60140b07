/**
 * The flow target (`service: http.flow.adapter` with `flow: <id>`), Mercury's HttpToFlow: runs the
 * endpoint's flow with the request as its input dataset (flow-input.ts), the correlation id as
 * `model.cid` and the endpoint's `timeout` (when rest.yaml sets one, else the flow's `ttl`) as the
 * instance's deadline, and answers with the flow's `output.*`. Unknown or refused flow → 500
 * `Flow <id> not found`; an abort → its status and message (408 `Flow timeout for N ms` at the
 * deadline). The endpoint's own 408 is held back past the flow's deadline so the flow's answers.
 */
import { AppException, EventEnvelope } from '@gatehouse/functions';
import { abortBody, type FlowResult } from '@gatehouse/flows';
import { flowDeadlineMs, flowInputOf, flowTraceOf } from '../../flows/index.ts';
import type { PipelineContext } from '../pipeline-context.ts';
import type { Target, TargetCall } from './target.ts';

/** How long after the flow's deadline the endpoint's 408 may still come (a flow stuck in a bug). */
const watchdogGraceMs = 1000;

export const flowTarget: Target = {
  kind: 'flow',
  abortable: false,
  waitMs: (ctx, call) => {
    const ttlMs = deadlineMs(ctx, call);
    return ttlMs === undefined ? undefined : ttlMs + watchdogGraceMs;
  },
  // Not async: a flow whose functions all answer synchronously is answered at once, without the
  // endpoint's timer, as such a function is.
  run: (ctx, call) => {
    const { endpoint, data, cid, trace, step } = call;
    const flowId = endpoint.flow;
    if (!flowId) throw new AppException(400, 'Missing x-flow-id in HTTP request headers');
    const ttlMs = deadlineMs(ctx, call);
    if (!ctx.flows || ttlMs === undefined) throw new AppException(500, `Flow ${flowId} not found`);
    const result = ctx.flows.runEager(flowId, flowInputOf(data, ttlMs), {
      cid,
      ttlMs,
      ...(trace ? { trace: flowTraceOf(trace) } : {}),
      ...(step ? { parentStep: step } : {}),
    });
    return result instanceof Promise ? result.then(answerOf) : answerOf(result);
  },
};

/** The flow's answer as the endpoint's: its output, or an abort's status and message. */
function answerOf(result: FlowResult): EventEnvelope {
  if (result.kind === 'abort') {
    if (typeof result.message === 'string') throw new AppException(result.status, result.message);
    // A failed function's own error body (a map) stays as it was, inside Mercury's error map.
    return new EventEnvelope().setStatus(result.status).setBody(abortBody(result));
  }
  const reply = new EventEnvelope().setStatus(result.status).setBody(result.body);
  for (const [name, value] of Object.entries(result.headers)) reply.setHeader(name, value);
  return reply;
}

/** The flow instance's deadline in ms; undefined when the endpoint's flow is not loaded. */
function deadlineMs(ctx: PipelineContext, { endpoint, data }: TargetCall): number | undefined {
  const flow = endpoint.flow === undefined ? undefined : ctx.flows?.flows.get(endpoint.flow);
  if (!flow) return undefined;
  return flowDeadlineMs(endpoint.timeoutGiven ? endpoint.timeoutMs : undefined, flow.ttlMs, data.headers);
}
