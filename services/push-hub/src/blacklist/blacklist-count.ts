/**
 * How many sessions are blacklisted now, for the connections API's replica stats and the console:
 * the blacklist entries in the shared store, the same number whichever replica counts. Counting is
 * a key scan, so an answer is reused for `maxAgeMs` (an open console asks every 2 s) and concurrent
 * askers share one scan. A store that cannot count gives null: the console says "unknown", not 0.
 */
export function blacklistCounter(
  count: () => Promise<number>,
  maxAgeMs: number,
  now: () => number = Date.now,
): () => Promise<number | null> {
  let last: { value: number | null; at: number } | undefined;
  let running: Promise<number | null> | undefined;
  return () => {
    if (last !== undefined && now() - last.at < maxAgeMs) return Promise.resolve(last.value);
    running ??= count()
      .then(
        (value) => value,
        () => null,
      )
      .then((value) => {
        last = { value, at: now() };
        running = undefined;
        return value;
      });
    return running;
  };
}
