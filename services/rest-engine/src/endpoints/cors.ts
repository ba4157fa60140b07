/**
 * CORS sets (`cors:` in rest.yaml): the headers of the answer to an OPTIONS preflight, and the
 * headers added to every actual response of an endpoint that names the set. Static configuration,
 * meant for development (in production an API gateway answers CORS).
 */
import { parseHeaderLine } from './header-transform.ts';

export interface CorsSet {
  id: string;
  /**
   * Headers of the 204 preflight answer, as `[name, value]`. Names are lower-cased, like every
   * header the engine writes, so a function's header of the same name replaces rather than doubles.
   */
  options: Array<readonly [string, string]>;
  headers: Array<readonly [string, string]>;
}

/** Returns the set, or the reason it is invalid. */
export function compileCorsSet(entry: Record<string, unknown>): CorsSet | string {
  const id = entry['id'];
  if (typeof id !== 'string' || id.trim() === '') return 'missing id';
  const options = lines(entry['options'], 'options');
  if (typeof options === 'string') return options;
  const headers = lines(entry['headers'], 'headers');
  if (typeof headers === 'string') return headers;
  return { id, options, headers };
}

function lines(value: unknown, field: string): Array<readonly [string, string]> | string {
  if (!Array.isArray(value)) return `${field} must be a list of 'Access-Control-…: value' strings`;
  const out: Array<readonly [string, string]> = [];
  for (const line of value) {
    const pair = parseHeaderLine(line);
    if (!pair) return `${field}: '${String(line)}' is not 'Name: value'`;
    if (!pair[0].startsWith('access-control-')) {
      return `${field}: cors header must start with Access-Control-, actual: ${String(line)}`;
    }
    out.push(pair);
  }
  return out;
}
