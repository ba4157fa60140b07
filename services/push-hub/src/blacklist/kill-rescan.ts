/**
 * Kills are durable. A session kill reaches a hub as a store notification (its blacklist key was
 * set). A hub whose store watch was cut off (a Redis restart, a network cut) does not hear the kills
 * written meanwhile; when the watch listens again it gets a `resync` change, and then looks up every
 * session it holds in the blacklist and kills those found. A kill written after the watch listens
 * again is announced to it; one written before is found by the look-up: none falls in between.
 *
 * A look-up that fails is tried again, 100 ms later at first (the watch's connection may be back a
 * moment before the one the look-ups use), then backing off to 2 s, a bounded number of times; a new
 * resync starts over.
 */
export interface KillRescanDeps {
  /** The sessions this replica holds now (connections and waiting long polls). */
  sessions(): string[];
  isBlacklisted(sessionId: string): Promise<boolean>;
  kill(sessionId: string): void;
  /** A rescan failed; `attempt` counts from 1 since the last resync. */
  onError(err: unknown, attempt: number): void;
  /** Told once per completed rescan. */
  rescanned?(found: number): void;
  /** Look-ups in flight at once (default 200). */
  concurrency?: number;
  /** Delay before the first retry (default 100 ms); it doubles up to 2 s. */
  retryDelayMs?: number;
  maxAttempts?: number;
}

export class KillRescan {
  private readonly deps: KillRescanDeps;
  private running: Promise<void> | undefined;
  private again = false;
  private generation = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(deps: KillRescanDeps) {
    this.deps = deps;
  }

  /** Starts a rescan now (or right after the one running). */
  request(): void {
    this.generation++;
    clearTimeout(this.timer);
    this.start(1);
  }

  /** Resolves once no rescan runs (tests). */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  stop(): void {
    this.generation++;
    clearTimeout(this.timer);
  }

  private start(attempt: number): void {
    if (this.running) {
      this.again = true;
      return;
    }
    const generation = this.generation;
    this.running = this.rescan().then(
      (found) => this.deps.rescanned?.(found),
      (err: unknown) => {
        this.deps.onError(err, attempt);
        const retry = !this.again && generation === this.generation;
        if (retry && attempt < (this.deps.maxAttempts ?? 30)) {
          const delay = Math.min((this.deps.retryDelayMs ?? 100) * 2 ** (attempt - 1), 2000);
          this.timer = setTimeout(() => this.start(attempt + 1), delay);
          this.timer.unref();
        }
      },
    );
    void this.running.finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.start(1);
      }
    });
  }

  private async rescan(): Promise<number> {
    const sessions = this.deps.sessions();
    const concurrency = this.deps.concurrency ?? 200;
    let found = 0;
    for (let i = 0; i < sessions.length; i += concurrency) {
      const batch = sessions.slice(i, i + concurrency);
      const answers = await Promise.all(batch.map((s) => this.deps.isBlacklisted(s)));
      answers.forEach((blacklisted, j) => {
        if (blacklisted) {
          found++;
          this.deps.kill(batch[j]!);
        }
      });
    }
    return found;
  }
}
