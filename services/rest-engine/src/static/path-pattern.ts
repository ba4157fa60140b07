/**
 * Path patterns of the `static-content` section: exact text, `prefix*` (starts with) or `*suffix`
 * (ends with). Compiled once into a predicate.
 */
export type PathPredicate = (path: string) => boolean;

const validPattern = /^(\*[^*]+|[^*]+\*|[^*]+)$/;

export function isValidPathPattern(pattern: string): boolean {
  return validPattern.test(pattern);
}

export function compilePathPatterns(patterns: readonly string[]): PathPredicate {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  const suffixes: string[] = [];
  for (const p of patterns) {
    if (p.startsWith('*')) suffixes.push(p.slice(1));
    else if (p.endsWith('*')) prefixes.push(p.slice(0, -1));
    else exact.add(p);
  }
  return (path) =>
    exact.has(path) || prefixes.some((p) => path.startsWith(p)) || suffixes.some((s) => path.endsWith(s));
}
