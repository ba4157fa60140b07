/**
 * Registration of a function for the REST engine: a module's default export made with
 * `defineFunction`. The engine loads every such module from its functions folders.
 */
import type { AsyncHttpRequest } from './async-http-request.ts';

const registrationMark = Symbol.for('gatehouse.functions.FunctionRegistration');

/**
 * Read-only event headers the engine passes next to the request: `my_route`, `my_trace_id`,
 * `my_trace_path` (traced endpoints only) and `my_correlation_id`.
 */
export type EventHeaders = Readonly<Record<string, string>>;

/**
 * What a flow task's function receives as `input`: the body its input data mapping built (a map;
 * a task that maps `* -> *` or a single value to the body gets that value instead).
 */
export type TaskBody = Record<string, unknown>;

/**
 * `input` is the request (an AsyncHttpRequest) when the function serves an endpoint, and the mapped
 * body when a flow task calls it: a function written for flows says so with
 * `defineFunction<TaskBody>({ … })` instead of casting.
 */
export type HandleEvent<I = AsyncHttpRequest> = (
  headers: EventHeaders,
  input: I,
  instance: number,
) => unknown;

/** How the engine holds a function: it passes whatever the caller has (request or mapped body). */
export type RegisteredHandler = (headers: EventHeaders, input: unknown, instance: number) => unknown;

export interface FunctionDefinition<I = AsyncHttpRequest> {
  /** Route name referenced by `service` in rest.yaml: lower case letters, digits, `.`, `-`, `_`. */
  route: string;
  /** How many events the function handles at the same time; more wait in line. Default 100. */
  instances?: number;
  /**
   * Returns the response body, an EventEnvelope (status, headers, body), or a promise of either;
   * throws AppException(status, message) to reject the request.
   */
  handleEvent: HandleEvent<I>;
}

export interface FunctionRegistration {
  readonly route: string;
  readonly instances: number;
  readonly handleEvent: RegisteredHandler;
  readonly [registrationMark]: true;
}

export const defaultInstances = 100;
const routePattern = /^[a-z0-9][a-z0-9._-]*$/;

export function defineFunction<I = AsyncHttpRequest>(
  definition: FunctionDefinition<I>,
): FunctionRegistration {
  const route = definition.route?.trim().toLowerCase() ?? '';
  if (!routePattern.test(route)) {
    throw new TypeError(`invalid route name '${definition.route}': use letters, digits, '.', '-' and '_'`);
  }
  const instances = definition.instances ?? defaultInstances;
  if (!Number.isInteger(instances) || instances < 1) {
    throw new TypeError(`instances of ${route} must be a positive integer, got ${instances}`);
  }
  if (typeof definition.handleEvent !== 'function') {
    throw new TypeError(`function ${route} has no handleEvent`);
  }
  return Object.freeze({
    route,
    instances,
    handleEvent: definition.handleEvent as RegisteredHandler,
    [registrationMark]: true as const,
  });
}

/** True for a registration made by defineFunction (from any copy of this module). */
export function isFunctionRegistration(value: unknown): value is FunctionRegistration {
  return typeof value === 'object' && value !== null && registrationMark in value;
}

/**
 * Whether a function's answer is still to come (a promise or other thenable) rather than the answer
 * itself: a function may answer synchronously, and its callers answer at once when it did.
 */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}
