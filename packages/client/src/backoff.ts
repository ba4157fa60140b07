/**
 * Exponential backoff with full jitter (a random delay between 0 and the capped exponential bound),
 * so that clients cut at the same moment do not come back at the same moment.
 */
export interface BackoffOptions {
  /** Bound of the first delay (ms). */
  initialMs?: number;
  /** Largest bound a delay can have (ms). */
  maxMs?: number;
}

/** The smallest first bound: a bound of 0 doubles to 0 for ever, and the client retries in a busy loop. */
const MIN_INITIAL_MS = 1;

/** The longest wait a server's hint can ask for. */
export const MAX_HINT_MS = 5 * 60_000;

export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly random: () => number;
  private attempt = 0;

  constructor(options: BackoffOptions = {}, random: () => number = Math.random) {
    this.initialMs = options.initialMs ?? 500;
    this.maxMs = options.maxMs ?? 30_000;
    if (!(this.initialMs >= MIN_INITIAL_MS))
      throw new RangeError(
        `Gatehouse: backoff.initialMs must be at least ${MIN_INITIAL_MS} (got ${this.initialMs})`,
      );
    if (!(this.maxMs >= this.initialMs) || this.maxMs === Number.POSITIVE_INFINITY)
      throw new RangeError(
        `Gatehouse: backoff.maxMs must be finite and at least initialMs (got ${this.maxMs})`,
      );
    this.random = random;
  }

  /** The next delay (ms); each call doubles the bound until it reaches the cap. */
  next(): number {
    const bound = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    return Math.floor(this.random() * bound);
  }

  /**
   * A short delay, within the first bound and at most a second: for a server that asked to come
   * back at once (a draining replica spreads its clients already; a little jitter more keeps a
   * batch of them apart).
   */
  soon(): number {
    return Math.floor(this.random() * Math.min(this.initialMs, 1000));
  }

  /**
   * A delay the server asked for (`retry:`, `Retry-After`), capped at MAX_HINT_MS: a server (or
   * anyone between without TLS) cannot park the client for days.
   */
  hinted(ms: number): number {
    return Math.min(Math.max(0, ms), MAX_HINT_MS);
  }

  /** After a connection that worked: the next failure starts from the first bound again. */
  reset(): void {
    this.attempt = 0;
  }
}
