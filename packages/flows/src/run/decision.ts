/**
 * Which `next` task a decision task's `decision` value picks (Mercury's rules): `true` → the first,
 * `false` → the second; anything else is read as an integer (decimals truncated, non-numeric → -1)
 * raised to at least 1, and N picks the N-th. Returns the index, or undefined for an invalid value
 * (none at all, or N beyond the list).
 */
export function decisionIndex(value: unknown, branches: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === true) return 0;
  if (value === false) return branches >= 2 ? 1 : undefined;
  const n = Math.max(1, integerOf(value));
  return n <= branches ? n - 1 : undefined;
}

/** Mercury's str2int: the integer part of a number's text, -1 when it is not a number. */
export function integerOf(value: unknown): number {
  if (typeof value === 'number') return Number.isFinite(value) ? Math.trunc(value) : -1;
  const text = String(value).trim();
  if (!/^[-+]?\d+(\.\d*)?$/.test(text)) return -1;
  return Math.trunc(Number(text));
}

/** `(value)` in the invalid-decision message: the value printed as is. */
export function decisionText(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** `@retry` and `@retry | my.task` entries of a decision task's `next`. */
export function parseRetry(entry: string): { retry: boolean; otherwise: string | undefined } {
  const parts = entry
    .split('|')
    .map((s) => s.trim())
    .filter(Boolean);
  const retry = parts.includes('@retry');
  return { retry, otherwise: parts.find((p) => p !== '@retry') };
}
