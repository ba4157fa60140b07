/**
 * The functions the engine can call, by route name. Each function runs at most `instances` events
 * at a time; more wait in line (first come, first served) and each call gets a free instance
 * number, as `handleEvent(headers, input, instance)` promises. A call that ends hands its instance
 * straight to the first one waiting: were it put back for the waiter to take a microtask later, a
 * call made in between would take it, the waiter would run beside it without an instance, and a
 * `instances: 1` function (an external state machine) would lose its order and then an instance.
 *
 * Each call hands the function the input it declared (function-input.ts): `call` and `invoke` are
 * for callers with an HTTP request, `callTask` for a flow task with its mapped body.
 */
import type {
  AsyncHttpRequest,
  EventHeaders,
  FunctionInput,
  FunctionRegistration,
} from '@gatehouse/functions';
import { inputOfBody, inputOfRequest } from './function-input.ts';

/** Makes the function's declared input of what the caller has; may throw (a body that cannot be it). */
type Convert<T> = (
  kind: FunctionInput | undefined,
  headers: EventHeaders,
  given: T,
  route: string,
) => unknown;

const fromRequest: Convert<AsyncHttpRequest> = inputOfRequest;
const fromBody: Convert<unknown> = inputOfBody;

interface Slot {
  registration: FunctionRegistration;
  source: string;
  /** Instance numbers not in use; empty while calls wait. */
  free: number[];
  /** Calls waiting for an instance, first come first served; each is handed one. */
  waiting: Array<(instance: number) => void>;
}

export class FunctionRegistry {
  private readonly slots = new Map<string, Slot>();

  /** Returns false (registering nothing) when the route is already taken. */
  register(registration: FunctionRegistration, source: string): boolean {
    if (this.slots.has(registration.route)) return false;
    const free = Array.from({ length: registration.instances }, (_, i) => registration.instances - i);
    this.slots.set(registration.route, { registration, source, free, waiting: [] });
    return true;
  }

  has(route: string): boolean {
    return this.slots.has(route);
  }

  sourceOf(route: string): string | undefined {
    return this.slots.get(route)?.source;
  }

  routes(): string[] {
    return [...this.slots.keys()];
  }

  /**
   * Calls the function with an HTTP request and hands back what it returned: the value itself when
   * the function answered synchronously and an instance was free (no promise, no timer on the hot
   * path), else a promise. Throws what a synchronous function threw.
   */
  call(route: string, headers: EventHeaders, request: AsyncHttpRequest): unknown {
    return this.run(route, headers, request, fromRequest);
  }

  /**
   * Calls the function for a flow task with the body its input mapping built; answers as `call`.
   * Throws an AppException (400) when the body cannot be the input the function declared.
   */
  callTask(route: string, headers: EventHeaders, body: unknown): unknown {
    return this.run(route, headers, body, fromBody);
  }

  /** Calls the function with an HTTP request; resolves with what it returned, rejects with what it threw. */
  async invoke(route: string, headers: EventHeaders, request: AsyncHttpRequest): Promise<unknown> {
    const slot = this.slots.get(route);
    if (!slot) throw new Error(`Service ${route} not reachable`);
    return this.later(slot, headers, fromRequest(slot.registration.input, headers, request, route));
  }

  private run<T>(route: string, headers: EventHeaders, given: T, convert: Convert<T>): unknown {
    const slot = this.slots.get(route);
    if (slot === undefined) return Promise.reject(new Error(`Service ${route} not reachable`));
    const input = convert(slot.registration.input, headers, given, route);
    const instance = slot.free.pop();
    if (instance === undefined) return this.later(slot, headers, input);
    let result: unknown;
    try {
      result = slot.registration.handleEvent(headers, input, instance);
    } catch (err) {
      release(slot, instance);
      throw err;
    }
    if (typeof (result as PromiseLike<unknown> | null)?.then !== 'function') {
      release(slot, instance);
      return result;
    }
    return Promise.resolve(result).finally(() => release(slot, instance));
  }

  /** Runs the function once an instance is free. */
  private async later(slot: Slot, headers: EventHeaders, input: unknown): Promise<unknown> {
    const instance = slot.free.pop() ?? (await new Promise<number>((resolve) => slot.waiting.push(resolve)));
    try {
      return await slot.registration.handleEvent(headers, input, instance);
    } finally {
      release(slot, instance);
    }
  }
}

function release(slot: Slot, instance: number): void {
  const next = slot.waiting.shift();
  if (next) next(instance);
  else slot.free.push(instance);
}
