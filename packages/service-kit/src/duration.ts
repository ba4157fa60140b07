/**
 * Durations, read one way everywhere: environment variables (env-config.ts `duration`) and the REST
 * engine's rest.yaml `timeout`. A number with a unit, `ms`, `s`, `m`, `h` or `d` (`250ms`, `1.5s`,
 * `2m`), or a bare number, which is milliseconds. Milliseconds because that is what the RIG
 * variables this gateway keeps (`PROXY_RECV_TIMEOUT=5000`), the OpenTelemetry ones and the proxy's
 * `response_timeout` mean by a bare number; Mercury's rest.yaml read `timeout: 20` as seconds, and
 * such a value now falls below the 1 s floor of a REST timeout and is refused with a hint, never
 * silently taken as 20 ms.
 */

const unitMs = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const syntax = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/;

/** Whether the text is a number without a unit (milliseconds), for hints in messages. */
export function isBareNumber(value: string | number): boolean {
  return typeof value === 'number' || /^\s*\d+(?:\.\d+)?\s*$/.test(value);
}

/** Milliseconds; throws with a message naming the accepted forms. */
export function parseDuration(value: string | number): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new Error('must be a duration of 0 or more');
    return Math.round(value);
  }
  const m = syntax.exec(value.trim());
  if (!m) throw new Error('must be a duration such as 500ms, 15s, 2m or 1h (a bare number is milliseconds)');
  return Math.round(Number(m[1]) * unitMs[(m[2] ?? 'ms') as keyof typeof unitMs]);
}

/** `250ms`, `15s`, `1.5s`, `2m`, `1h`: the shortest exact form, for messages and defaults. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ['d', unitMs.d],
    ['h', unitMs.h],
    ['m', unitMs.m],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return ms >= 1000 && ms % 100 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/**
 * The range a duration setting accepts. Every duration has a lower bound: 0 or a few milliseconds
 * for an interval turns a timer into a busy loop (a heartbeat every 0 ms), so `min` is required;
 * `off` lets 0 through as "disabled" for settings that document it.
 */
export interface DurationBounds {
  min: string;
  max?: string;
  /** 0 is accepted and means "off" (below `min` otherwise). */
  off?: boolean;
}

/** Throws when the duration is outside the bounds, saying what is accepted. */
export function checkDuration(ms: number, bounds: DurationBounds): number {
  if (bounds.off && ms === 0) return ms;
  const min = parseDuration(bounds.min);
  const max = bounds.max === undefined ? undefined : parseDuration(bounds.max);
  const range = `${max === undefined ? `at least ${formatDuration(min)}` : `${formatDuration(min)} to ${formatDuration(max)}`}${bounds.off ? ', or 0 for off' : ''}`;
  if (ms < min || (max !== undefined && ms > max))
    throw new Error(`must be ${range}, got ${formatDuration(ms)}`);
  return ms;
}
