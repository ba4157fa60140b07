/**
 * Publish → client latency as a histogram (0.5 ms buckets up to 60 s, the maximum kept exactly):
 * millions of deliveries in a few client processes, merged by the orchestrator, without keeping
 * one number per delivery.
 */
const bucketsPerMs = 2;
const bucketCount = 60_000 * bucketsPerMs;

export class LatencyHistogram {
  readonly counts = new Uint32Array(bucketCount + 1);
  count = 0;
  max = 0;

  add(ms: number): void {
    const b = Math.min(bucketCount, Math.max(0, Math.floor(ms * bucketsPerMs)));
    this.counts[b]!++;
    this.count++;
    if (ms > this.max) this.max = ms;
  }

  /** The non-empty buckets as [bucket, count] pairs (what crosses IPC). */
  sparse(): SparseHistogram {
    const buckets: Array<[number, number]> = [];
    for (let b = 0; b <= bucketCount; b++) if (this.counts[b]! > 0) buckets.push([b, this.counts[b]!]);
    return { buckets, count: this.count, max: this.max };
  }

  merge(h: SparseHistogram): void {
    for (const [b, c] of h.buckets) this.counts[b]! += c;
    this.count += h.count;
    if (h.max > this.max) this.max = h.max;
  }

  /** Nearest-rank percentile, in ms (the upper edge of its bucket). */
  percentile(p: number): number {
    if (this.count === 0) return Number.NaN;
    const rank = Math.max(1, Math.ceil((p / 100) * this.count));
    let seen = 0;
    for (let b = 0; b <= bucketCount; b++) {
      seen += this.counts[b]!;
      if (seen >= rank) return Math.min((b + 1) / bucketsPerMs, this.max);
    }
    return this.max;
  }
}

export interface SparseHistogram {
  buckets: Array<[number, number]>;
  count: number;
  max: number;
}
