/**
 * Endpoint timeouts: a number with `ms`, `s`, `m` or `h`, or a bare number of seconds (rest.yaml
 * writes `timeout: 30s` or `timeout: 20`). Returns milliseconds, undefined when unreadable.
 */
const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export function parseTimeout(value: unknown): number | undefined {
  if (typeof value === 'number') return value > 0 && Number.isFinite(value) ? value * 1000 : undefined;
  if (typeof value !== 'string') return undefined;
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/.exec(value.trim());
  if (!m) return undefined;
  const ms = Math.round(Number(m[1]) * units[m[2] ?? 's']!);
  return ms > 0 ? ms : undefined;
}

/** `30s`, `1.5s`, `250ms`: how a timeout reads in messages. */
export function describeTimeout(ms: number): string {
  return ms % 1000 === 0 || ms > 1000 ? `${ms / 1000} seconds` : `${ms} ms`;
}
