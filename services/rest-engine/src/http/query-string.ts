/**
 * Query strings and form bodies: `+` is a space, percent escapes are decoded (a malformed one is
 * kept as written), a repeated key collects its values in a list. The maps have no prototype (as
 * node:querystring's): a key such as `__proto__`, `toString` or `constructor` is data like any
 * other, where a plain object would read the inherited member or replace its prototype.
 */
import type { QueryValue } from '@gatehouse/functions';

/**
 * True when `raw` holds more than `max` parameters (non-empty `&`-separated pairs): counted
 * without splitting, so a query or form of a million `&` costs a scan, not a million strings.
 */
export function exceedsParameters(raw: string, max: number): boolean {
  let count = 0;
  let start = 0;
  while (start <= raw.length) {
    const end = raw.indexOf('&', start);
    const stop = end < 0 ? raw.length : end;
    if (stop > start && ++count > max) return true;
    if (end < 0) return false;
    start = end + 1;
  }
  return false;
}

export function parseQueryString(raw: string): Record<string, QueryValue> {
  const out = queryMap();
  if (raw === '') return out;
  for (const pair of raw.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const key = decode(eq < 0 ? pair : pair.slice(0, eq));
    const value = eq < 0 ? '' : decode(pair.slice(eq + 1));
    addValue(out, key, value);
  }
  return out;
}

/** The message of a refusal naming rest.server.max-parameters. */
export function tooManyParameters(what: string, max: number): string {
  return `${what} has more than ${max} parameters (rest.server.max-parameters)`;
}

/** An empty map of request keys, without a prototype. */
export function queryMap(): Record<string, QueryValue> {
  return Object.create(null) as Record<string, QueryValue>;
}

/** Adds to a map made by queryMap. */
export function addValue(target: Record<string, QueryValue>, key: string, value: string): void {
  const prior = target[key];
  if (prior === undefined) target[key] = value;
  else if (Array.isArray(prior)) prior.push(value);
  else target[key] = [prior, value];
}

function decode(text: string): string {
  const spaced = text.includes('+') ? text.replaceAll('+', ' ') : text;
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}
