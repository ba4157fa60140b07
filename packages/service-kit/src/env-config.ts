/**
 * Typed configuration from environment variables.
 *
 * A service declares its settings as a map of variable name → field; `loadConfig` parses every one,
 * collects all problems and throws a single ConfigError that names each bad variable, so an invalid
 * deployment stops at start-up with one readable message instead of failing later.
 */
import { checkDuration, type DurationBounds, isBareNumber, parseDuration } from './duration.ts';

export interface Field<T> {
  readonly description: string;
  readonly defaultText: string;
  parse(raw: string | undefined): T;
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

type Spec = Record<string, Field<unknown>>;
export type ConfigOf<S extends Spec> = { [K in keyof S]: S[K] extends Field<infer T> ? T : never };

export function loadConfig<S extends Spec>(spec: S, env: NodeJS.ProcessEnv = process.env): ConfigOf<S> {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(spec)) {
    try {
      out[name] = field.parse(blankToUndefined(env[name]));
    } catch (err) {
      problems.push(`${name}: ${(err as Error).message} (got ${shown(name, env[name])})`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return out as ConfigOf<S>;
}

/** Markdown rows for a service README: name, default, description. */
export function describeConfig(spec: Spec): string {
  return Object.entries(spec)
    .map(([name, f]) => `| \`${name}\` | ${f.defaultText} | ${f.description} |`)
    .join('\n');
}

/** Secrets never reach logs, not even in a configuration error. */
function shown(name: string, raw: string | undefined): string {
  return /SECRET|PASSWORD|PASS$|KEY$|SASL|TOKEN/.test(name) && raw !== undefined
    ? '<redacted>'
    : JSON.stringify(raw);
}

function blankToUndefined(raw: string | undefined): string | undefined {
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

function field<T>(description: string, fallback: T | undefined, parse: (raw: string) => T): Field<T> {
  return {
    description,
    defaultText: fallback === undefined ? '(required)' : `\`${String(fallback)}\``,
    parse(raw) {
      if (raw === undefined) {
        if (fallback === undefined) throw new Error('is required');
        return fallback;
      }
      return parse(raw);
    },
  };
}

export function str(description: string, fallback?: string): Field<string> {
  return field(description, fallback, (raw) => raw);
}

/** An optional string: undefined when unset. */
export function optionalStr(description: string): Field<string | undefined> {
  return { description, defaultText: '(unset)', parse: (raw) => raw };
}

export function int(description: string, fallback: number, range: { min?: number; max?: number } = {}) {
  const { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = range;
  return field(description, fallback, (raw) => {
    if (!/^-?\d+$/.test(raw)) throw new Error('must be an integer');
    const n = Number(raw);
    if (n < min || n > max) throw new Error(`must be between ${min} and ${max}`);
    return n;
  });
}

export function port(description: string, fallback: number): Field<number> {
  return int(description, fallback, { min: 0, max: 65535 });
}

export function bool(description: string, fallback: boolean): Field<boolean> {
  return field(description, fallback, (raw) => {
    const v = raw.toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(v)) return true;
    if (['0', 'false', 'no', 'off'].includes(v)) return false;
    throw new Error('must be true or false');
  });
}

export function oneOf<const T extends string>(
  description: string,
  values: readonly T[],
  fallback: T,
): Field<T> {
  return field(description, fallback, (raw) => {
    const hit = values.find((v) => v.toLowerCase() === raw.toLowerCase());
    if (hit === undefined) throw new Error(`must be one of ${values.join(', ')}`);
    return hit;
  });
}

/** The items of a comma-separated setting, trimmed; empty items are dropped. */
export function commaSeparated(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** A comma-separated list; empty items are dropped. */
export function list(description: string, fallback: string[] = []): Field<string[]> {
  const f = field(description, fallback, commaSeparated);
  return { ...f, defaultText: fallback.length ? `\`${fallback.join(',')}\`` : '(empty)' };
}

/**
 * A duration in milliseconds (duration.ts: `250ms`, `15s`, `2m`, a bare number is milliseconds),
 * within its bounds: every duration setting names its lower bound, so `HEARTBEAT_INTERVAL=0` stops
 * start-up instead of starting a busy loop.
 */
export function duration(description: string, fallback: string, bounds: DurationBounds): Field<number> {
  const f = field(description, fallback, (raw) => raw);
  return {
    ...f,
    parse(raw) {
      const text = f.parse(raw);
      try {
        return checkDuration(parseDuration(text), bounds);
      } catch (err) {
        const note = isBareNumber(text) ? ' (a bare number is milliseconds)' : '';
        throw new Error(`${(err as Error).message}${note}`);
      }
    },
  };
}
