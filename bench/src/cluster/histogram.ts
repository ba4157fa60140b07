/**
 * Publish → client latency as a histogram (0.5 ms buckets up to 60 s, 100 ms buckets from there to
 * an hour, the maximum kept exactly): millions of deliveries in a few client processes, merged by
 * the orchestrator, without keeping one number per delivery. S1's clients catch up on a million
 * records for many minutes, so the coarse part is what its percentiles read.
 */
const fineBucketsPerMs = 2;
const fineEndMs = 60_000;
const fineBuckets = fineEndMs * fineBucketsPerMs;
const coarseMs = 100;
const coarseBuckets = (3_600_000 - fineEndMs) / coarseMs;
/** The last bucket holds everything from an hour on (its percentiles read the exact maximum). */
const bucketCount = fineBuckets + coarseBuckets;

function bucketOf(ms: number): number {
  if (ms < fineEndMs) return Math.max(0, Math.floor(ms * fineBucketsPerMs));
  return Math.min(bucketCount, fineBuckets + Math.floor((ms - fineEndMs) / coarseMs));
}

/** The upper edge of a bucket, in ms. */
function upperEdgeOf(b: number): number {
  if (b < fineBuckets) return (b + 1) / fineBucketsPerMs;
  if (b < bucketCount) return fineEndMs + (b - fineBuckets + 1) * coarseMs;
  return Number.POSITIVE_INFINITY;
}

export class LatencyHistogram {
  readonly counts = new Uint32Array(bucketCount + 1);
  count = 0;
  max = 0;

  add(ms: number): void {
    this.counts[bucketOf(ms)]!++;
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

  /** Nearest-rank percentile, in ms (the upper edge of its bucket, at most the maximum). */
  percentile(p: number): number {
    if (this.count === 0) return Number.NaN;
    const rank = Math.max(1, Math.ceil((p / 100) * this.count));
    let seen = 0;
    for (let b = 0; b <= bucketCount; b++) {
      seen += this.counts[b]!;
      if (seen >= rank) return Math.min(upperEdgeOf(b), this.max);
    }
    return this.max;
  }
}

export interface SparseHistogram {
  buckets: Array<[number, number]>;
  count: number;
  max: number;
}
