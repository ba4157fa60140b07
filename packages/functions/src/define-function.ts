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

export type HandleEvent = (headers: EventHeaders, input: AsyncHttpRequest, instance: number) => unknown;

export interface FunctionDefinition {
  /** Route name referenced by `service` in rest.yaml: lower case letters, digits, `.`, `-`, `_`. */
  route: string;
  /** How many events the function handles at the same time; more wait in line. Default 100. */
  instances?: number;
  /**
   * Returns the response body, an EventEnvelope (status, headers, body), or a promise of either;
   * throws AppException(status, message) to reject the request.
   */
  handleEvent: HandleEvent;
}

export interface FunctionRegistration {
  readonly route: string;
  readonly instances: number;
  readonly handleEvent: HandleEvent;
  readonly [registrationMark]: true;
}

export const defaultInstances = 100;
const routePattern = /^[a-z0-9][a-z0-9._-]*$/;

export function defineFunction(definition: FunctionDefinition): FunctionRegistration {
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
    handleEvent: definition.handleEvent,
    [registrationMark]: true as const,
  });
}

/** True for a registration made by defineFunction (from any copy of this module). */
export function isFunctionRegistration(value: unknown): value is FunctionRegistration {
  return typeof value === 'object' && value !== null && registrationMark in value;
}
