/**
 * Starts a binding's consumer again after it died for good, until it runs or the engine stops:
 * 1 s doubling to 30 s between tries, jittered so the replicas of a group do not rejoin in step.
 */
export interface RestartPolicy {
  firstMs: number;
  maxMs: number;
}

export const defaultRestartPolicy: RestartPolicy = { firstMs: 1_000, maxMs: 30_000 };

/** The pause before try `attempt` (0-based): half the doubled delay fixed, half random. */
export function restartDelayMs(attempt: number, policy: RestartPolicy, random = Math.random): number {
  const full = Math.min(policy.maxMs, policy.firstMs * 2 ** Math.min(attempt, 30));
  return Math.round(full / 2 + (random() * full) / 2);
}

export class RestartLoop {
  private readonly start: () => Promise<void>;
  private readonly policy: RestartPolicy;
  private readonly onTry: (attempt: number, error?: unknown) => void;
  private attempt = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  /** `onTry` is told of every try (for the restarts metric) and of the error of a failed one. */
  constructor(
    start: () => Promise<void>,
    onTry: (attempt: number, error?: unknown) => void,
    policy = defaultRestartPolicy,
  ) {
    this.start = start;
    this.onTry = onTry;
    this.policy = policy;
  }

  get pending(): boolean {
    return this.timer !== undefined;
  }

  /** The consumer died: try again after the backoff (a no-op once stopped or already waiting). */
  schedule(): void {
    if (this.stopped || this.timer !== undefined) return;
    this.timer = setTimeout(() => void this.tryOnce(), restartDelayMs(this.attempt, this.policy));
  }

  /** The consumer ran long enough to count as healthy: the next death waits the first delay again. */
  reset(): void {
    this.attempt = 0;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async tryOnce(): Promise<void> {
    this.timer = undefined;
    if (this.stopped) return;
    const attempt = this.attempt++;
    try {
      await this.start();
      this.onTry(attempt);
    } catch (err) {
      this.onTry(attempt, err);
      this.schedule();
    }
  }
}
