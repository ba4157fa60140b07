/**
 * A target is what answers a declared endpoint once the request has its body and passed
 * authentication. Every target has the same shape: `run` starts it and returns its answer (an
 * EventEnvelope or a plain value, as a function returns) or a promise of it; it throws or rejects
 * for an error answer (an AppException carries the status). The target stage around it handles
 * secondaries, the trace step, the endpoint timeout and writing the answer, so a new kind of target
 * is one more file here plus one line in `targetOf`.
 */
import type { AsyncHttpRequest, HttpRequestData } from '@gatehouse/functions';
import { flowAdapterRoute } from '../../builtin-functions.ts';
import type { Endpoint } from '../../endpoint.ts';
import type { TraceStep } from '../../trace-recorder.ts';
import type { Exchange, PipelineContext } from '../exchange.ts';
import { flowTarget } from './flow-target.ts';
import { functionTarget } from './function-target.ts';
import { relayTarget } from './relay-target.ts';

export interface TargetCall {
  x: Exchange;
  data: HttpRequestData;
  /** `data` as the AsyncHttpRequest functions receive. */
  request: AsyncHttpRequest;
  /** The target's trace step (traced endpoints): a flow's steps go under it. */
  step: TraceStep | undefined;
}

export interface Target {
  kind: 'function' | 'flow' | 'relay';
  /** True when the target gets `x.abort`, fired when the endpoint times out. */
  abortable: boolean;
  run(ctx: PipelineContext, call: TargetCall): unknown;
}

export function targetOf(endpoint: Endpoint): Target {
  if (endpoint.relay) return relayTarget;
  if (endpoint.primary === flowAdapterRoute) return flowTarget;
  return functionTarget;
}
