/**
 * A count per second over the last minute, for the replica stats of the connections API: sixty
 * one-second buckets, the current one excluded from the rate (it is not over yet). Adding is a few
 * arithmetic operations, so the delivery path can feed it.
 */
const SECONDS = 60;

export class RateMeter {
  private readonly buckets = new Float64Array(SECONDS);
  /** The second (since the epoch) the current bucket counts. */
  private second = 0;
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
    this.second = Math.floor(now() / 1000);
  }

  add(n: number): void {
    this.advance();
    this.buckets[this.second % SECONDS]! += n;
  }

  /** The mean per second over the last minute's complete seconds. */
  perSecond(): number {
    this.advance();
    const current = this.buckets[this.second % SECONDS]!;
    let sum = 0;
    for (const n of this.buckets) sum += n;
    return (sum - current) / (SECONDS - 1);
  }

  /** Empties the buckets of the seconds that passed since the last call. */
  private advance(): void {
    const second = Math.floor(this.now() / 1000);
    if (second === this.second) return;
    const passed = Math.min(second - this.second, SECONDS);
    for (let i = 1; i <= passed; i++) this.buckets[(this.second + i) % SECONDS] = 0;
    this.second = second;
  }
}
