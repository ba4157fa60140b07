/**
 * Header transformation sets (`headers:` in rest.yaml). For a request or a response: when `keep`
 * lists names, every other header is dropped; otherwise the `drop` names are removed; then the
 * `add` entries are set, replacing what was there. Names compare without regard to case. Essential
 * headers (content type, length, framing, cookies) are never dropped.
 */
export interface HeaderTransform {
  /** Lower-cased name → value. */
  readonly add: ReadonlyArray<readonly [string, string]>;
  /** Lower-cased names. */
  readonly keep: ReadonlySet<string>;
  readonly drop: ReadonlySet<string>;
}

export interface HeaderTransformSet {
  id: string;
  request: HeaderTransform | undefined;
  response: HeaderTransform | undefined;
}

export const essentialHeaders: ReadonlySet<string> = new Set([
  'content-type',
  'content-length',
  'transfer-encoding',
  'set-cookie',
  'connection',
  'host',
]);

/** Applies the transform in place to a map with lower-cased names. */
export function transformHeaders<V>(
  headers: Record<string, V>,
  t: HeaderTransform,
  asValue: (s: string) => V,
) {
  if (t.keep.size > 0) {
    for (const name of Object.keys(headers)) {
      if (!t.keep.has(name) && !essentialHeaders.has(name)) delete headers[name];
    }
  } else if (t.drop.size > 0) {
    for (const name of t.drop) if (!essentialHeaders.has(name)) delete headers[name];
  }
  for (const [name, value] of t.add) headers[name] = asValue(value);
}

/** Splits `Name: value` at the first colon; undefined when either side is empty. */
export function parseHeaderLine(line: unknown): readonly [string, string] | undefined {
  if (typeof line !== 'string') return undefined;
  const colon = line.indexOf(':');
  if (colon <= 0) return undefined;
  const name = line.slice(0, colon).trim().toLowerCase();
  const value = line.slice(colon + 1).trim();
  return name && value ? [name, value] : undefined;
}

/**
 * Builds a set from its rest.yaml entry, returning problems (invalid `add` lines are skipped with a
 * warning, like the reference engine).
 */
export function compileHeaderTransformSet(entry: Record<string, unknown>): {
  set: HeaderTransformSet;
  warnings: string[];
} {
  const warnings: string[] = [];
  const id = String(entry['id']);
  const side = (name: 'request' | 'response'): HeaderTransform | undefined => {
    const raw = entry[name];
    if (typeof raw !== 'object' || raw === null) return undefined;
    const spec = raw as Record<string, unknown>;
    const add: Array<readonly [string, string]> = [];
    for (const [i, line] of list(spec['add']).entries()) {
      const pair = parseHeaderLine(line);
      if (pair) add.push(pair);
      else
        warnings.push(`Skip invalid header ${id} ${name}.add[${i}]: '${String(line)}' is not 'Name: value'`);
    }
    const names = (key: string) => new Set(list(spec[key]).map((n) => String(n).trim().toLowerCase()));
    return { add, keep: names('keep'), drop: names('drop') };
  };
  return { set: { id, request: side('request'), response: side('response') }, warnings };
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
