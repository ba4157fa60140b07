/**
 * The sessions this replica heard killed lately. A connect reads the blacklist while it is admitted,
 * and the hub closes a killed session's connections when it hears the kill (a store notification).
 * Over Redis the read and the notification come on two connections, in either order: a connect can
 * read "not blacklisted" just before the kill is written, and the hub can hear the kill before that
 * connect is held, so the kill finds nothing to close. Remembering when each kill was heard closes
 * that gap: a connect whose checks began before a kill of its session was heard is ended when it is
 * added (Hub.add); one that began after it read the blacklist after the kill was written.
 *
 * A kill written while the store watch was cut off is never heard: the hub looks up every session
 * it holds once the watch listens again (kill-rescan.ts). A connect whose checks began before that
 * and that is added after the look-ups took their list is looked up on its own (`resumedSince`).
 *
 * Bounded in time (`keepMs`, SESSION_KILL_MEMORY: longer than any admission takes) and in count
 * (`maxSessions`, SESSION_KILL_MEMORY_MAX_SESSIONS: the oldest is forgotten first). Kills are
 * operators' (the blacklist API), not clients', and an entry is ~100 bytes.
 */
export interface RecentKillsOptions {
  keepMs: number;
  maxSessions: number;
  /** A monotonic clock in ms; the gate reads the same one (`checkedFrom`). */
  now?: () => number;
}

export class RecentKills {
  /** When each session was heard killed, oldest first (a kill heard again moves to the end). */
  private readonly heardAt = new Map<string, number>();
  private readonly keepMs: number;
  private readonly maxSessions: number;
  private readonly now: () => number;
  /** When the store watch last listened again after a cut (-Infinity: never). */
  private resumedAt = Number.NEGATIVE_INFINITY;

  constructor(options: RecentKillsOptions) {
    this.keepMs = options.keepMs;
    this.maxSessions = options.maxSessions;
    this.now = options.now ?? (() => performance.now());
  }

  get size(): number {
    return this.heardAt.size;
  }

  heard(sessionId: string): void {
    const now = this.now();
    this.heardAt.delete(sessionId);
    this.heardAt.set(sessionId, now);
    this.forgetOld(now);
  }

  /** Whether a kill of the session was heard at or after `checkedFrom` (when a connect's checks began). */
  killedSince(sessionId: string, checkedFrom: number): boolean {
    const at = this.heardAt.get(sessionId);
    return at !== undefined && at >= checkedFrom;
  }

  /** The store watch listens again after a cut: kills written meanwhile were not heard. */
  watchResumed(): void {
    this.resumedAt = this.now();
  }

  /** Whether the store watch listened again after a cut at or after `checkedFrom`. */
  resumedSince(checkedFrom: number): boolean {
    return this.resumedAt >= checkedFrom;
  }

  private forgetOld(now: number): void {
    for (const [sessionId, at] of this.heardAt) {
      if (this.heardAt.size <= this.maxSessions && now - at <= this.keepMs) return;
      this.heardAt.delete(sessionId);
    }
  }
}
