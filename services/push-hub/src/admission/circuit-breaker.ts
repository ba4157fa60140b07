/**
 * A circuit breaker for a dependency every connect waits on (the connect hook): after `failures`
 * failures in a row it opens, and for `coolDownMs` nothing calls the dependency: each caller is
 * told how long to wait (its Retry-After) at no cost, so a hook that is down or slow is not hit by
 * every connect of a reconnect storm, each holding a connection place for the whole time-out. Then
 * one call tries it (half-open): a success closes the breaker, a failure opens it again.
 *
 * Hand-written rather than a library (opossum): that one opens on an error percentage over a
 * rolling window and wraps the call; this needs a count in a row and the time left, 30 lines.
 */
export class CircuitBreaker {
  private readonly failuresToOpen: number;
  private readonly coolDownMs: number;
  private readonly now: () => number;
  private failures = 0;
  private openUntil = 0;
  /** A half-open trial call is under way: the others wait for its outcome. */
  private trying = false;

  constructor(options: { failures: number; coolDownMs: number; now?: () => number }) {
    this.failuresToOpen = options.failures;
    this.coolDownMs = options.coolDownMs;
    this.now = options.now ?? Date.now;
  }

  /** 0 when a call may go now (the trial call once the cool-down is over); else ms to wait. */
  admit(): number {
    if (this.failures < this.failuresToOpen) return 0;
    const left = this.openUntil - this.now();
    if (left > 0) return left;
    if (this.trying) return Math.min(this.coolDownMs, 1000);
    this.trying = true;
    return 0;
  }

  succeeded(): void {
    this.failures = 0;
    this.trying = false;
  }

  failed(): void {
    this.failures++;
    this.trying = false;
    if (this.failures >= this.failuresToOpen) this.openUntil = this.now() + this.coolDownMs;
  }
}
