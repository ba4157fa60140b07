/**
 * The one canonical request path every stage of every service sees: what is matched, checked,
 * filtered and logged is exactly what is forwarded or served. Two components that read one URL two
 * ways (the proxy matching `/x/%65cho` raw while the REST engine decodes it to `/x/echo`) is how a
 * JWT check gets skipped, so the path is made canonical once, at the edge, and the raw target is
 * never read again.
 *
 * The policy is Envoy's `normalize_path` + `merge_slashes` with its escaped-slash rejection:
 * 1. the target must be origin-form (`/…`); `#`, a raw `\`, spaces, control characters and raw
 *    non-ASCII bytes are refused (browsers percent-encode them; a sender that does not is either
 *    broken or probing);
 * 2. `%XX` escapes of unreserved characters (RFC 3986 §2.3: letters, digits, `-._~`) are decoded,
 *    every other escape is kept with upper-case hex; `%2F`, `%5C` and `%00` are refused (a segment
 *    boundary or a NUL an upstream may decode), and so are malformed escapes and escaped bytes that
 *    are not valid UTF-8 (overlong forms of `/` and `.` included);
 * 3. empty segments are dropped (`//` is `/`);
 * 4. dot segments are removed (RFC 3986 §5.2.4, after step 2, so `%2e%2e` is `..`); `..` never
 *    climbs above the root;
 * 5. a trailing slash is kept, and so is case: paths are case-sensitive (RFC 3986 §6.2.2.1).
 *    Components that fold case (the REST engine) are reconciled where a decision is made (the
 *    proxy's token check), not by rewriting what the upstream receives.
 *
 * The result is idempotent: a canonical path is its own canonical path, and decoding is never
 * applied twice (`%252e` stays `%252e`).
 */

export type CanonicalPath = { ok: true; path: string } | { ok: false; reason: string };

export interface PathPolicy {
  /**
   * `%2F` and `%5C`: refused (the default), or kept encoded inside their segment, where the
   * resources a surface names may hold a `/` (the internal API's session ids).
   */
  encodedSlashes?: 'refuse' | 'keep';
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The canonical form of a request path (the target's part before `?`), or why there is none. */
export function canonicalPath(raw: string, policy: PathPolicy = {}): CanonicalPath {
  if (raw.charCodeAt(0) !== 0x2f) return refuse('the request target must start with /');
  const decoded = decodeUnreserved(raw, policy.encodedSlashes === 'keep');
  if (typeof decoded !== 'string') return decoded;
  return { ok: true, path: removeDotAndEmptySegments(decoded) };
}

/** Splits a request target into its canonical path and its query string (with the `?`, or ''). */
export function canonicalTarget(
  target: string,
  policy: PathPolicy = {},
): { ok: true; path: string; query: string } | { ok: false; reason: string } {
  const q = target.indexOf('?');
  const canonical = canonicalPath(q < 0 ? target : target.slice(0, q), policy);
  if (!canonical.ok) return canonical;
  return { ok: true, path: canonical.path, query: q < 0 ? '' : target.slice(q) };
}

function refuse(reason: string): CanonicalPath {
  return { ok: false, reason };
}

/** Step 1 and 2: characters checked, unreserved escapes decoded, the rest upper-cased. */
function decodeUnreserved(raw: string, keepSlashes: boolean): string | CanonicalPath {
  if (!needsWork(raw)) return raw;
  let out = '';
  let i = 0;
  while (i < raw.length) {
    const c = raw.charCodeAt(i);
    if (c !== 0x25) {
      const problem = characterProblem(c);
      if (problem) return refuse(problem);
      out += raw[i];
      i++;
      continue;
    }
    const run = escapeRun(raw, i, keepSlashes);
    if ('ok' in run) return run;
    out += run.text;
    i += run.length;
  }
  return out;
}

/** True when the path has an escape or a character that must be refused (the common path has neither). */
function needsWork(raw: string): boolean {
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 0x25 || characterProblem(c)) return true;
  }
  return false;
}

function characterProblem(c: number): string | undefined {
  if (c <= 0x20 || c === 0x7f) return 'the path holds a space or a control character';
  if (c > 0x7e) return 'the path holds a character that is not percent-encoded';
  if (c === 0x5c) return 'the path holds a backslash';
  if (c === 0x23) return 'the path holds a #';
  return undefined;
}

/**
 * A run of consecutive escapes, decoded where unreserved and re-encoded otherwise, with the length
 * of the raw text it took. The run's
 * non-ASCII bytes must form valid UTF-8 on their own: a multi-byte character is never split by
 * another character.
 */
function escapeRun(
  raw: string,
  start: number,
  keepSlashes: boolean,
): { text: string; length: number } | CanonicalPath {
  const bytes: number[] = [];
  for (let i = start; raw.charCodeAt(i) === 0x25; i += 3) {
    const byte = hexByte(raw, i + 1);
    if (byte < 0) return refuse('the path holds a malformed percent-encoding');
    if ((byte === 0x2f || byte === 0x5c) && !keepSlashes) return refuse('the path holds an encoded / or \\');
    if (byte === 0) return refuse('the path holds an encoded NUL');
    bytes.push(byte);
  }
  if (bytes.some((b) => b > 0x7f)) {
    try {
      utf8.decode(Uint8Array.from(bytes));
    } catch {
      return refuse('the path holds percent-encoded bytes that are not UTF-8');
    }
  }
  let out = '';
  for (const b of bytes) out += unreserved(b) ? String.fromCharCode(b) : `%${hex(b)}`;
  return { text: out, length: bytes.length * 3 };
}

function hexByte(raw: string, at: number): number {
  if (at + 2 > raw.length) return -1;
  const text = raw.slice(at, at + 2);
  return /^[0-9A-Fa-f]{2}$/.test(text) ? Number.parseInt(text, 16) : -1;
}

function hex(b: number): string {
  return b.toString(16).toUpperCase().padStart(2, '0');
}

/** RFC 3986 §2.3. */
function unreserved(b: number): boolean {
  return (
    (b >= 0x41 && b <= 0x5a) ||
    (b >= 0x61 && b <= 0x7a) ||
    (b >= 0x30 && b <= 0x39) ||
    b === 0x2d ||
    b === 0x2e ||
    b === 0x5f ||
    b === 0x7e
  );
}

/** Steps 3 to 5 on a path whose only escapes are of reserved or non-ASCII bytes. */
function removeDotAndEmptySegments(path: string): string {
  if (!path.includes('//') && !path.includes('/.')) return path;
  const raw = path.split('/');
  const kept: string[] = [];
  for (const segment of raw) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') kept.pop();
    else kept.push(segment);
  }
  const last = raw[raw.length - 1];
  const trailing = last === '' || last === '.' || last === '..';
  if (kept.length === 0) return '/';
  return `/${kept.join('/')}${trailing ? '/' : ''}`;
}
