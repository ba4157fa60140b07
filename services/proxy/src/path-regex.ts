/**
 * `path_regex` and `path_replacement`. A regex matches the whole request path: it is anchored as
 * `^(?:…)$`, and a `^` or `$` the author wrote is not doubled (RIG's rule). Unlike RIG, matching is
 * case-sensitive, as URL paths are (RFC 3986 §6.2.2.1), so `/Admin` does not reach an endpoint
 * written for `/admin`; a part can be made case-insensitive with the `(?i:…)` modifier.
 */

export type CompiledRegex = { ok: true; regex: RegExp } | { ok: false; error: string };

export function compilePathRegex(source: string): CompiledRegex {
  try {
    return { ok: true, regex: new RegExp(`^(?:${stripAnchors(source)})$`, 'u') };
  } catch (err) {
    return { ok: false, error: (err as Error).message.replace(/^Invalid regular expression: /, '') };
  }
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
export function compileReplacement(replacement: string): (match: RegExpExecArray) => string {
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
