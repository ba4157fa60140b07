/**
 * The subset of JSON-Path that flow mappings use (`$.a.b`, `$.list[0]`, `$['a b']`, `$.list[*].x`,
 * `$.a.*`, `$..x`). A definite path gives its value or NOT_FOUND; a path with a wildcard or deep scan
 * gives the list of matches (as Jayway JsonPath, which Mercury uses, does). Filters (`[?(...)]`) and
 * slices are not supported: such a path reads as NOT_FOUND.
 */
import { type DataMap, isDataMap, NOT_FOUND, unsafePathError, unsafeSegment } from './data-path.ts';

type Step =
  | { readonly kind: 'key'; readonly name: string }
  | { readonly kind: 'index'; readonly index: number }
  | { readonly kind: 'wildcard' }
  | { readonly kind: 'deep'; readonly name: string };

function stepsOf(expression: string): Step[] | null {
  const steps: Step[] = [];
  let i = 1; // after `$`
  const text = expression.trim();
  while (i < text.length) {
    if (text.startsWith('..', i)) {
      const m = /^\.\.([^.[\]]+)/.exec(text.slice(i));
      if (!m) return null;
      steps.push({ kind: 'deep', name: m[1]! });
      i += m[0].length;
    } else if (text[i] === '.') {
      const m = /^\.([^.[\]]+)/.exec(text.slice(i));
      if (!m) return null;
      steps.push(m[1] === '*' ? { kind: 'wildcard' } : { kind: 'key', name: m[1]! });
      i += m[0].length;
    } else if (text[i] === '[') {
      const close = text.indexOf(']', i);
      if (close === -1) return null;
      const inner = text.slice(i + 1, close).trim();
      if (inner === '*') steps.push({ kind: 'wildcard' });
      else if (/^\d+$/.test(inner)) steps.push({ kind: 'index', index: Number(inner) });
      else if (/^'.*'$/.test(inner) || /^".*"$/.test(inner))
        steps.push({ kind: 'key', name: inner.slice(1, -1) });
      else return null;
      i = close + 1;
    } else {
      return null;
    }
  }
  return steps;
}

function children(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (isDataMap(value)) return Object.values(value);
  return [];
}

function deepScan(value: unknown, name: string, out: unknown[]): void {
  if (isDataMap(value) && Object.hasOwn(value, name)) out.push(value[name]);
  for (const child of children(value)) deepScan(child, name, out);
}

/** Throws 400 for a step named `__proto__`, `constructor` or `prototype` (see data-path.ts). */
export function readJsonPath(root: DataMap, expression: string): unknown {
  const steps = stepsOf(expression);
  if (steps === null || !expression.trim().startsWith('$')) return NOT_FOUND;
  const unsafe = unsafeSegment(steps.flatMap((s) => (s.kind === 'key' || s.kind === 'deep' ? [s.name] : [])));
  if (unsafe !== undefined) throw unsafePathError(unsafe, expression);
  const indefinite = steps.some((s) => s.kind === 'wildcard' || s.kind === 'deep');
  let current: unknown[] = [root];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const value of current) {
      if (step.kind === 'key' && isDataMap(value) && Object.hasOwn(value, step.name))
        next.push(value[step.name]);
      if (step.kind === 'index' && Array.isArray(value) && step.index < value.length)
        next.push(value[step.index]);
      if (step.kind === 'wildcard') next.push(...children(value));
      if (step.kind === 'deep') deepScan(value, step.name, next);
    }
    current = next;
  }
  if (indefinite) return current;
  return current.length === 0 ? NOT_FOUND : current[0];
}
