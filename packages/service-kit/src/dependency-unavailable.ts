/**
 * "Our own dependency is down": the store or a bus could not be reached. Such a failure is never the
 * client's fault, so it is never answered 400 or 500: every service answers 503 with Retry-After,
 * and the client tries again (here or at another replica) once the dependency is back.
 *
 * Errors say so by carrying `unavailable: true` and the dependency's name (the store's and the
 * bus's own error classes do, so this package needs to know neither); a wrapper error counts when
 * any error in its `cause` chain does.
 */
import type { ServerResponse } from 'node:http';

export interface Unavailability {
  readonly unavailable: true;
  /** What could not be reached: `store`, `bus` … */
  readonly dependency: string;
}

/** Seconds a client is told to wait before it tries again (Retry-After). */
export const retryAfterSeconds = 1;

export class DependencyUnavailableError extends Error implements Unavailability {
  override readonly name = 'DependencyUnavailableError';
  readonly unavailable = true as const;
  readonly dependency: string;

  constructor(dependency: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.dependency = dependency;
  }
}

/** The unavailability an error (or one of its causes) reports, or undefined. */
export function unavailabilityOf(err: unknown): Unavailability | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    const u = e as Partial<Unavailability>;
    if (u.unavailable === true && typeof u.dependency === 'string') return u as Unavailability;
  }
  return undefined;
}

export function isUnavailable(err: unknown): boolean {
  return unavailabilityOf(err) !== undefined;
}

/** The headers of a 503 for an unreachable dependency. */
export function unavailableHeaders(): Record<string, string> {
  return { 'retry-after': String(retryAfterSeconds) };
}

/** Answers 503 with Retry-After, naming the dependency (not the error: it may hold addresses). */
export function sendUnavailable(
  res: ServerResponse,
  dependency: string,
  headers: Record<string, string> = {},
): void {
  const text = `The gateway's ${dependency} is unavailable for the moment; retry later.`;
  res.writeHead(503, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
    ...unavailableHeaders(),
  });
  res.end(text);
}
