/**
 * When each connection's JWT expires, for 10k+ connections without a timer each: connections are
 * kept in one bucket per second of expiry, and one timer, armed for the earliest bucket only, hands
 * the due ones to `expire`. Adding, moving and removing are O(1); a firing costs the connections
 * due plus a scan of the bucket keys for the next earliest (few: one per distinct second).
 */
const MAX_DELAY_MS = 24 * 3600 * 1000;

export class ExpiryWheel<T> {
  private readonly buckets = new Map<number, Set<T>>();
  private readonly bucketOf = new Map<T, number>();
  private readonly expire: (due: T[]) => void;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(expire: (due: T[]) => void, now: () => number = Date.now) {
    this.expire = expire;
    this.now = now;
  }

  get size(): number {
    return this.bucketOf.size;
  }

  /** Expires `item` at `at` (ms since the epoch, rounded up to the second); replaces an earlier time. */
  set(item: T, at: number): void {
    this.delete(item);
    const second = Math.ceil(at / 1000);
    let bucket = this.buckets.get(second);
    if (!bucket) {
      bucket = new Set();
      this.buckets.set(second, bucket);
    }
    bucket.add(item);
    this.bucketOf.set(item, second);
    if (second * 1000 < this.timerAt) this.arm(second * 1000);
  }

  delete(item: T): void {
    const second = this.bucketOf.get(item);
    if (second === undefined) return;
    this.bucketOf.delete(item);
    const bucket = this.buckets.get(second)!;
    bucket.delete(item);
    if (bucket.size === 0) this.buckets.delete(second);
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private arm(at: number): void {
    clearTimeout(this.timer);
    this.timerAt = at;
    // setTimeout holds at most ~24.8 days; a later expiry is re-armed when that one fires.
    this.timer = setTimeout(() => this.fire(), Math.min(Math.max(0, at - this.now()), MAX_DELAY_MS));
    this.timer.unref();
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const nowSecond = this.now() / 1000;
    const due: T[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (const [second, bucket] of this.buckets) {
      if (second > nowSecond) {
        next = Math.min(next, second);
        continue;
      }
      for (const item of bucket) {
        due.push(item);
        this.bucketOf.delete(item);
      }
      this.buckets.delete(second);
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next * 1000);
    if (due.length > 0) this.expire(due);
  }
}
