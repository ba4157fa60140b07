/**
 * How deeply data nests objects and arrays: every way JSON-like data enters a service (events,
 * subscription lists, API definitions, REST bodies parsed from JSON, XML or forms) is checked
 * against MAX_JSON_DEPTH. V8 parses any depth, but much that comes later walks the value
 * recursively (JSON.stringify, canonical forms, deep copies, encoders) and overflows the stack a
 * few thousand levels down, far from the request that brought the value and after it was accepted.
 */
import { HttpError } from './http-response.ts';

/**
 * The default bound. Real payloads nest a few dozen levels at most; .NET's System.Text.Json stops
 * at 64, Jackson at 1,000 (its maintainers found fuzzers overflowing the stack before that). 128
 * leaves room for data the gateway wraps (a request body becomes an event's data, a constraint
 * sits four levels into a subscription list).
 */
export const defaultMaxJsonDepth = 128;

/**
 * The highest bound a setting may choose: a recursive walk from a shallow stack overflows at about
 * 3,000 levels here (JSON.stringify at about 4,400), so 1,000 keeps a margin for code that runs
 * deep in a call stack.
 */
export const maxJsonDepthCeiling = 1000;

/** A 400 naming the limit; `what` says which input it was (`the body`, `subscriptions`). */
export class JsonTooDeepError extends HttpError {
  readonly maxDepth: number;
  constructor(what: string, maxDepth: number) {
    super(400, `${what} nests objects and arrays deeper than MAX_JSON_DEPTH (${maxDepth}) levels`);
    this.name = 'JsonTooDeepError';
    this.maxDepth = maxDepth;
  }
}

/**
 * True when `value` nests objects and arrays more than `maxDepth` levels (`{}` and `[]` are one
 * level, a scalar none). Iterative, and it looks no deeper than one level past the bound. Byte
 * arrays (event data read as bytes) are leaves.
 */
export function exceedsJsonDepth(value: unknown, maxDepth: number): boolean {
  if (!isNested(value)) return false;
  const values: object[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const current = values.pop()!;
    const depth = depths.pop()!;
    if (depth > maxDepth) return true;
    if (Array.isArray(current)) {
      for (const item of current) {
        if (isNested(item)) {
          values.push(item);
          depths.push(depth + 1);
        }
      }
      continue;
    }
    for (const key in current) {
      const item = (current as Record<string, unknown>)[key];
      if (isNested(item)) {
        values.push(item);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/** Throws JsonTooDeepError (400) when `value` nests deeper than `maxDepth`. */
export function assertJsonDepth(value: unknown, maxDepth: number, what = 'the body'): void {
  if (exceedsJsonDepth(value, maxDepth)) throw new JsonTooDeepError(what, maxDepth);
}

function isNested(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !ArrayBuffer.isView(value);
}
