/**
 * The W3C Trace Context `tracestate` header: up to 32 `key=value` members, most recent first, e.g.
 * `rojo=00f067aa0ba902b7,congo=t61rcWkgMzE`.
 *
 * Parsing (Trace Context Level 1 grammar): members are split at commas, surrounding spaces and tabs
 * are dropped, empty members are allowed and skipped, and a member that breaks the key or value
 * grammar is ignored on its own, as the spec permits. A header that breaks the list rules as a
 * whole, more than 32 members or a key given twice, is discarded entirely, as the W3C test suite
 * expects. Several header fields are combined in order, as RFC 9110 says.
 */

export interface TraceStateMember {
  key: string;
  value: string;
}

/** Members in order, the most recently updated first. */
export type TraceState = readonly TraceStateMember[];

export const maxTraceStateMembers = 32;
/** The combined length the spec asks every vendor to propagate at least. */
export const defaultTraceStateMaxLength = 512;
/** Members longer than this go first when the header must be shortened. */
const longMemberLength = 128;

const keyChars = '[a-z0-9_\\-*/]';
const simpleKey = `[a-z]${keyChars}{0,255}`;
const multiTenantKey = `[a-z0-9]${keyChars}{0,240}@[a-z]${keyChars}{0,13}`;
const keySyntax = new RegExp(`^(?:${simpleKey}|${multiTenantKey})$`);
// Printable ASCII except `,` and `=`, not ending in a space, at most 256 characters.
const valueSyntax = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

export function isValidTraceStateKey(key: string): boolean {
  return keySyntax.test(key);
}

export function isValidTraceStateValue(value: string): boolean {
  return valueSyntax.test(value);
}

export function parseTraceState(header: string | readonly string[] | undefined): TraceState {
  if (header === undefined) return [];
  const text = typeof header === 'string' ? header : header.join(',');
  const members: TraceStateMember[] = [];
  const seen = new Set<string>();
  for (const raw of text.split(',')) {
    const member = raw.replace(/^[ \t]+|[ \t]+$/g, '');
    if (member === '') continue;
    const eq = member.indexOf('=');
    const key = member.slice(0, eq);
    const value = member.slice(eq + 1);
    if (eq === -1 || !isValidTraceStateKey(key) || !isValidTraceStateValue(value)) continue;
    if (seen.has(key)) return [];
    seen.add(key);
    members.push({ key, value });
  }
  return members.length > maxTraceStateMembers ? [] : members;
}

/**
 * The header value, or '' for an empty state. Longer than `maxLength`, whole members are dropped:
 * those over 128 characters first, then from the end, as the spec says.
 */
export function formatTraceState(state: TraceState, maxLength = defaultTraceStateMaxLength): string {
  let members = state.map(({ key, value }) => `${key}=${value}`);
  const length = () => members.join(',').length;
  if (length() > maxLength) members = members.filter((m) => m.length <= longMemberLength);
  while (length() > maxLength) members.pop();
  return members.join(',');
}

/**
 * A copy with `key` set to `value` and moved to the front (the spec's "update key value" and "add a
 * new key/value pair" mutations); the last member drops out beyond 32. Throws on an invalid key or
 * value, which is a programming error.
 */
export function setTraceStateMember(state: TraceState, key: string, value: string): TraceState {
  if (!isValidTraceStateKey(key)) throw new TypeError(`invalid tracestate key '${key}'`);
  if (!isValidTraceStateValue(value)) throw new TypeError(`invalid tracestate value '${value}'`);
  return [{ key, value }, ...state.filter((m) => m.key !== key)].slice(0, maxTraceStateMembers);
}

export function getTraceStateMember(state: TraceState, key: string): string | undefined {
  return state.find((m) => m.key === key)?.value;
}
