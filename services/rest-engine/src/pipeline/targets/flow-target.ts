/**
 * The flow target (`service: http.flow.adapter` with `flow: <id>`; the flow id is also in the
 * request header `x-flow-id`). Today it calls the built-in `http.flow.adapter` function, which
 * answers 501 until the flow engine exists. The flow engine plugs in here: `run` starts the flow
 * `x.endpoint.flow` with `data` as its input and `x.cid` as `model.cid`, and returns (a promise of)
 * the flow's answer; `x.abort.signal` fires when the endpoint timeout passes.
 */
import { flowAdapterRoute } from '../../builtin-functions.ts';
import { eventHeaders } from '../exchange.ts';
import type { Target } from './target.ts';

export const flowTarget: Target = {
  kind: 'flow',
  abortable: true,
  run: (ctx, { x, request }) =>
    ctx.registry.call(flowAdapterRoute, eventHeaders(flowAdapterRoute, x), request),
};
