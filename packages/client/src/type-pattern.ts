/**
 * Whether an event's type matches a subscription's type pattern, as the gateway matches it: segments
 * split on `.`, `*` any one segment, a last `>` one or more (`com.example.orders.*`,
 * `com.example.orders.>`); a pattern without wildcards matches only itself. For telling apart, in
 * an `event` handler, the events that came through different patterns. The gateway's own twin is
 * typeMatches in @gatehouse/cloudevents: this package is a browser bundle with no dependency.
 */
export function matchesType(pattern: string, type: string): boolean {
  const want = pattern.split('.');
  const have = type.split('.');
  for (let i = 0; i < want.length; i++) {
    if (want[i] === '>' && i === want.length - 1) return have.length > i;
    if (i >= have.length || (want[i] !== '*' && want[i] !== have[i])) return false;
  }
  return want.length === have.length;
}
