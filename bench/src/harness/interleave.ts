/**
 * Runs baseline and candidate alternately (A, B, A, B …) so that drifting machine load hits both
 * alike, and reports the medians and the ratio of medians (performance-anchors.md §6.1).
 */
import { median, ratio } from './stats.ts';

export interface Sides<T> {
  baseline: () => Promise<T>;
  candidate: () => Promise<T>;
}

export interface ComparedRuns {
  baseline: number[];
  candidate: number[];
  baselineMedian: number;
  candidateMedian: number;
  /** candidate ÷ baseline of the medians. */
  ratio: number;
}

export async function interleave(
  rounds: number,
  sides: Sides<number>,
  onRound?: (round: number, baseline: number, candidate: number) => void,
): Promise<ComparedRuns> {
  const baseline: number[] = [];
  const candidate: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const a = await sides.baseline();
    const b = await sides.candidate();
    baseline.push(a);
    candidate.push(b);
    onRound?.(i + 1, a, b);
  }
  const baselineMedian = median(baseline);
  const candidateMedian = median(candidate);
  return {
    baseline,
    candidate,
    baselineMedian,
    candidateMedian,
    ratio: ratio(candidateMedian, baselineMedian),
  };
}
