/**
 * `path_regex` and `path_replacement`. A regex matches the whole request path: it is anchored as
 * `^(?:…)$`, and a `^` or `$` the author wrote is not doubled (RIG's rule). Unlike RIG, matching is
 * case-sensitive, as URL paths are (RFC 3986 §6.2.2.1), so `/Admin` does not reach an endpoint
 * written for `/admin`; a part (or all, with a leading `(?i)`) can be made case-insensitive.
 *
 * Patterns come from whoever can write API definitions and run on every public request path, so
 * they are RE2 patterns, matched in time linear in the path (re2js, a pure-JS port of RE2): a
 * backtracking engine lets `(a+)+x` hold the event loop for hours on 40 characters. RE2 has no
 * backreferences, lookaround, atomic groups or possessive quantifiers; such a pattern is refused
 * with a message naming the construct (the README lists what RIG's PCRE patterns lose).
 */
import { RE2JS } from 're2js';

/** The groups of a match: `[0]` the whole path, `[n]` group n (undefined when it took no part). */
export type PathMatch = ReadonlyArray<string | undefined>;

export interface PathPattern {
  /** The groups when the whole path matches, otherwise undefined. */
  match(path: string): PathMatch | undefined;
}

export type CompiledRegex = { ok: true; regex: PathPattern } | { ok: false; error: string };

export function compilePathRegex(source: string, options: { ignoreCase?: boolean } = {}): CompiledRegex {
  const flags = options.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0;
  try {
    return { ok: true, regex: linearPattern(RE2JS.compile(`^(?:${stripAnchors(source)})$`, flags)) };
  } catch (err) {
    return { ok: false, error: describeSyntaxError((err as Error).message) };
  }
}

function linearPattern(re: RE2JS): PathPattern {
  const groups = re.groupCount();
  return {
    match(path) {
      // The DFA answers whether it matches without tracking groups; most routes do not match.
      if (!re.testExact(path)) return undefined;
      if (groups === 0) return [path];
      const m = re.matcher(path);
      if (!m.matches()) return undefined;
      const found: Array<string | undefined> = [];
      for (let i = 0; i <= groups; i++) found.push(m.group(i) ?? undefined);
      return found;
    },
  };
}

/** What RE2 refuses that PCRE (RIG) and JavaScript accept, by the fragment RE2's error quotes. */
const unsupported: Array<[RegExp, string]> = [
  [/`\(\?[=!]/, 'lookahead'],
  [/`\(\?<[=!]/, 'lookbehind'],
  [/`\\[1-9]/, 'backreferences'],
  [/`\(\?>/, 'atomic groups'],
  [/`[*+?}]\+/, 'possessive quantifiers'],
];

function describeSyntaxError(message: string): string {
  const text = message.replace(/^error parsing regexp: /, '');
  const feature = unsupported.find(([fragment]) => fragment.test(text))?.[1];
  if (feature === undefined) return text;
  return `${feature} is not supported (path_regex is matched in linear time, RE2 syntax): ${text}`;
}

function stripAnchors(source: string): string {
  let body = source.startsWith('^') ? source.slice(1) : source;
  if (body.endsWith('$') && !endsWithEscape(body.slice(0, -1))) body = body.slice(0, -1);
  return body;
}

/** True when the text ends in an odd number of backslashes (so a following `$` is escaped). */
function endsWithEscape(text: string): boolean {
  let n = 0;
  for (let i = text.length - 1; i >= 0 && text[i] === '\\'; i--) n++;
  return n % 2 === 1;
}

/**
 * The forwarded path for a match: `\0` is the whole path, `\1` … `\9` the capture groups (an
 * unmatched group inserts nothing); every other character is literal.
 */
export function compileReplacement(replacement: string): (match: PathMatch) => string {
  const parts: Array<string | number> = [];
  let literal = '';
  for (let i = 0; i < replacement.length; i++) {
    const c = replacement[i]!;
    const next = replacement[i + 1];
    if (c === '\\' && next !== undefined && next >= '0' && next <= '9') {
      if (literal) parts.push(literal);
      literal = '';
      parts.push(Number(next));
      i++;
    } else literal += c;
  }
  if (literal) parts.push(literal);
  return (match) => {
    let out = '';
    for (const part of parts) out += typeof part === 'number' ? (match[part] ?? '') : part;
    return out;
  };
}
