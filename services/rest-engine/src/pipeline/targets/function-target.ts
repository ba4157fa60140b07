/**
 * The function target: the endpoint's primary function, called through the registry. A function
 * that answers synchronously with an instance free is answered without a promise (the hot path).
 */
import { eventHeaders } from '../exchange.ts';
import type { Target } from './target.ts';

export const functionTarget: Target = {
  kind: 'function',
  abortable: false,
  run: (ctx, { x, request }) =>
    ctx.registry.call(x.endpoint.primary, eventHeaders(x.endpoint.primary, x), request),
};
