/**
 * One request to a declared endpoint while the stages answer it (exchange-stage.ts opens it). The
 * stages share it; a target never sees it, only its TargetCall (targets/target.ts), so what a
 * target may touch is written down in one place.
 */
import type { Endpoint } from '../endpoints/index.ts';
import type { ResponseTarget } from '../http/index.ts';
import type { RequestTrace } from '../tracing/index.ts';
import type { Target } from './targets/index.ts';

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
