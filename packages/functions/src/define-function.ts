/**
 * Registration of a function for the REST engine: a module's default export made with
 * `defineFunction`. The engine loads every such module from its functions folders.
 */
import type { AsyncHttpRequest } from './async-http-request.ts';
import type { EventEnvelope } from './event-envelope.ts';

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
 * What a function takes as `input`, as Mercury's input type of `TypedLambdaFunction<I, O>`; the
 * engine converts what its caller has (an endpoint: the request; a flow task: the mapped body and
 * headers) when it calls the function:
 *
 * | input | from an endpoint | from a flow task |
 * |---|---|---|
 * | (unset) | the AsyncHttpRequest | the mapped body |
 * | `http-request` | the AsyncHttpRequest | an AsyncHttpRequest made of the mapped body, read as `toMap()`'s shape (a body that is not a map: 400) |
 * | `map` | the request as a plain map (`toMap()`) | the mapped body (a body that is not a map: 400) |
 * | `envelope` | an EventEnvelope of the event: the event headers, the request map as body | an EventEnvelope: the mapped headers with the event headers, the mapped body |
 *
 * An input envelope also carries the route (`getTo()`), the correlation id and, on traced requests,
 * the trace id and path.
 */
export type FunctionInput = 'http-request' | 'envelope' | 'map';

export const functionInputs: readonly FunctionInput[] = ['http-request', 'envelope', 'map'];

/**
 * `input` is the request (an AsyncHttpRequest) when the function serves an endpoint, and the mapped
 * body when a flow task calls it, unless the function declares its `input` (FunctionInput): a
 * function written for flows says so with `defineFunction<TaskBody>({ … })` instead of casting, one
 * that declares `input: 'envelope'` or `'map'` gets an EventEnvelope or a TaskBody typed.
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
  /** What `input` is (FunctionInput); unset: what the caller has, the request or the mapped body. */
  input?: FunctionInput;
  /**
   * Returns the response body, an EventEnvelope (status, headers, body), or a promise of either;
   * throws AppException(status, message) to reject the request.
   */
  handleEvent: HandleEvent<I>;
}

export interface FunctionRegistration {
  readonly route: string;
  readonly instances: number;
  /** The input the function declared; undefined: what the caller has. */
  readonly input: FunctionInput | undefined;
  readonly handleEvent: RegisteredHandler;
  readonly [registrationMark]: true;
}

export const defaultInstances = 100;
const routePattern = /^[a-z0-9][a-z0-9._-]*$/;

export function defineFunction(
  definition: FunctionDefinition<EventEnvelope> & { input: 'envelope' },
): FunctionRegistration;
export function defineFunction(
  definition: FunctionDefinition<TaskBody> & { input: 'map' },
): FunctionRegistration;
export function defineFunction<I = AsyncHttpRequest>(definition: FunctionDefinition<I>): FunctionRegistration;
export function defineFunction<I>(definition: FunctionDefinition<I>): FunctionRegistration {
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
  const input = definition.input;
  if (input !== undefined && !functionInputs.includes(input)) {
    throw new TypeError(
      `input of ${route} must be one of ${functionInputs.join(', ')}, got ${String(input)}`,
    );
  }
  return Object.freeze({
    route,
    instances,
    input,
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
