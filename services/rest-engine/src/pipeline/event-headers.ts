/**
 * The headers every event of a request carries, whoever sends it (the authentication function,
 * the target, a secondary): the route, the correlation id and, on traced endpoints, the trace id
 * and path.
 */
import type { RequestTrace } from '../tracing/index.ts';

export interface RequestIds {
  cid: string;
  trace: RequestTrace | undefined;
}

export function eventHeaders(route: string, ids: RequestIds): Record<string, string> {
  const headers: Record<string, string> = { my_route: route, my_correlation_id: ids.cid };
  if (ids.trace) {
    headers['my_trace_id'] = ids.trace.id;
    headers['my_trace_path'] = ids.trace.path;
  }
  return headers;
}
