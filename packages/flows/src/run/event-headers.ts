/**
 * The headers the engine puts on every event a flow instance sends, a task's function call or an
 * `ext:` key-value alike: the route, the business correlation id and, on traced requests, the trace
 * id and path (Mercury's PostOffice carries the instance's trace on both; an external state
 * machine that keeps values per trace, as Mercury's own does, finds nothing without them).
 */
import type { FlowTrace } from './flow-trace.ts';

export function eventHeadersOf(
  route: string,
  cid: string,
  trace: FlowTrace | undefined,
  mapped: Record<string, string> = {},
): Record<string, string> {
  const headers: Record<string, string> = { ...mapped, my_route: route, my_correlation_id: cid };
  if (trace) {
    headers['my_trace_id'] = trace.id;
    headers['my_trace_path'] = trace.path;
  }
  return headers;
}
