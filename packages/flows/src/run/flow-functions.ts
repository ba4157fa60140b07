/**
 * How the flow engine reaches functions: by route name, through a registry the host provides (the
 * REST engine passes its function registry, so a task runs with the function's `instances` limit
 * like any request). A task's function gets its mapped input body (not an AsyncHttpRequest) and
 * the mapped event headers; it returns a body or an EventEnvelope, or throws (AppException for a
 * chosen status). `outcomeOfResult` / `outcomeOfError` turn each of those into one shape.
 */
import { isAppException, isEventEnvelope } from '@gatehouse/functions';

export type EventHeaderMap = Record<string, string>;

export interface FlowFunctions {
  has(route: string): boolean;
  /**
   * Calls the function: what it returned, as is when it answered synchronously (no promise to wait
   * for), else a promise of it; throws what a synchronous function threw.
   */
  call(route: string, headers: EventHeaderMap, body: unknown): unknown;
}

/** A task's completion as the engine sees it: an HTTP-like status, headers and a body. */
export interface TaskOutcome {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  /** Set on failures that came from a thrown error: the first lines of its stack. */
  stack?: string;
}

export function outcomeOfResult(result: unknown): TaskOutcome {
  if (!isEventEnvelope(result)) return { status: 200, headers: {}, body: result };
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(result.getHeaders())) {
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return { status: result.getStatus() ?? 200, headers, body: result.getBody() };
}

export function outcomeOfError(err: unknown): TaskOutcome {
  const status = isAppException(err) ? err.status : statusOfError(err);
  const message = err instanceof Error ? err.message : String(err);
  const outcome: TaskOutcome = { status, headers: {}, body: message };
  if (err instanceof Error && err.stack) outcome.stack = shortStack(err.stack);
  return outcome;
}

/** Errors the engine raises while mapping carry their status; other errors are 500. */
function statusOfError(err: unknown): number {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 100 && status <= 599 ? status : 500;
}

/** Mercury keeps the first 10 lines of a stack and counts the rest as `...(n)`. */
function shortStack(stack: string): string {
  const lines = stack.split('\n');
  if (lines.length <= 10) return stack;
  return [...lines.slice(0, 10), `...(${lines.length - 10})`].join('\n');
}
