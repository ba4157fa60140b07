/**
 * The function target: the endpoint's primary function, called through the registry. A function
 * that answers synchronously with an instance free is answered without a promise (the hot path).
 */
import { eventHeaders } from '../event-headers.ts';
import type { Target } from './target.ts';

export const functionTarget: Target = {
  kind: 'function',
  abortable: false,
  run: (ctx, call) => {
    const route = call.endpoint.primary;
    return ctx.registry.call(route, eventHeaders(route, call), call.request);
  },
};
