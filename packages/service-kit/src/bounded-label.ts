/**
 * A label whose values come from outside (a CloudEvent type, a topic name) would grow one series
 * per distinct value ever seen, and a Prometheus server scraping it would grow with it. This keeps
 * the first `limit` distinct values as they are and folds every later one into `other`, so a flood
 * of made-up values costs one series, not a thousand.
 */
export const otherLabelValue = 'other';

export function boundedLabel(limit: number): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (seen.has(value)) return value;
    if (seen.size >= limit) return otherLabelValue;
    seen.add(value);
    return value;
  };
}
