/**
 * A target is what answers a declared endpoint once the request has its body and passed
 * authentication. Every target has the same shape: `run` starts it and returns its answer (an
 * EventEnvelope or a plain value, as a function returns) or a promise of it; it throws or rejects
 * for an error answer (an AppException carries the status). The target stage around it handles
 * secondaries, the trace step, the endpoint timeout and writing the answer, so a new kind of target
 * is one more file here plus one line in target-of.ts.
 *
 * A target gets a TargetCall, not the exchange: it reads the request and answers, and never reaches
 * back into the stages (a target that needs the endpoint to wait longer says so with `waitMs`).
 */
import type { AsyncHttpRequest, HttpRequestData } from '@gatehouse/functions';
import type { Endpoint } from '../../endpoints/index.ts';
import type { TraceStep } from '../../tracing/index.ts';
import type { RequestIds } from '../event-headers.ts';
import type { PipelineContext } from '../pipeline-context.ts';

export interface TargetCall extends RequestIds {
  endpoint: Endpoint;
  data: HttpRequestData;
  /** `data` as the AsyncHttpRequest functions receive. */
  request: AsyncHttpRequest;
  /** The target's trace step (traced endpoints): a flow's steps go under it. */
  step: TraceStep | undefined;
  /** Aborted when the endpoint times out; set for `abortable` targets only. */
  signal: AbortSignal | undefined;
}

export interface Target {
  kind: 'function' | 'flow' | 'relay';
  /** True when the target gets `signal`, aborted when the endpoint times out. */
  abortable: boolean;
  /**
   * How long the endpoint waits for this call's answer, when not its `timeout`: a flow answers its
   * own 408 at its deadline, so the endpoint's comes only after it. Undefined: the endpoint's.
   */
  waitMs?(ctx: PipelineContext, call: TargetCall): number | undefined;
  run(ctx: PipelineContext, call: TargetCall): unknown;
}
