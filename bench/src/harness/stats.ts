/** Summary statistics for benchmark samples. */

export function median(values: number[]): number {
  return percentile(values, 50);
}

/** Nearest-rank percentile of unsorted values. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function ratio(candidate: number, baseline: number): number {
  return baseline === 0 ? Number.NaN : candidate / baseline;
}

export function formatRate(perSecond: number): string {
  return perSecond >= 1000 ? `${(perSecond / 1000).toFixed(1)}k/s` : `${perSecond.toFixed(0)}/s`;
}

export function formatRatio(r: number): string {
  return `${r.toFixed(2)}×`;
}
