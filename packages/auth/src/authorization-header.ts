/**
 * Reads JWTs from `Authorization` headers. A request may carry several headers, each with several
 * comma-separated credentials (`Bearer a, Bearer b`); every `Bearer` credential counts.
 *
 * Unlike RIG, a credential without a scheme is never taken for a bearer token (the spec: "`Bearer`
 * is not assumed when it is missing"); it is reported instead so the caller can answer with a clear
 * error rather than a silent "no token".
 */

export interface AuthorizationCredentials {
  /** Tokens of the `Bearer` credentials, in header order. */
  bearerTokens: string[];
  /** Some credential was a bare token with no scheme in front of it. */
  missingScheme: boolean;
  /** Some `Bearer` credential had no token after the scheme. */
  missingToken: boolean;
  /** Lower-cased schemes other than bearer (basic, digest …), which carry no JWT. */
  otherSchemes: string[];
}

export function parseAuthorizationHeader(
  values: string | readonly string[] | undefined,
): AuthorizationCredentials {
  const result: AuthorizationCredentials = {
    bearerTokens: [],
    missingScheme: false,
    missingToken: false,
    otherSchemes: [],
  };
  // The usual header, one credential without quotes or commas, is that credential alone.
  if (typeof values === 'string' && !values.includes(',') && !values.includes('"')) {
    const credential = values.trim();
    if (credential !== '') addCredential(result, credential);
    return result;
  }
  const list = values === undefined ? [] : typeof values === 'string' ? [values] : values;
  for (const value of list) {
    // Auth-params (`realm="x"`) after a non-bearer scheme are that credential's, not new ones.
    let previousTakesParams = false;
    for (const part of splitOutsideQuotes(value)) {
      const credential = part.trim();
      if (credential === '') continue;
      if (previousTakesParams && authParam.test(credential)) continue;
      previousTakesParams = addCredential(result, credential);
    }
  }
  return result;
}

/** A short reason for the caller's error answer when no bearer token could be read, else undefined. */
export function describeAuthorizationProblem(credentials: AuthorizationCredentials): string | undefined {
  if (credentials.missingScheme)
    return 'authorization credential without a scheme (expected "Bearer <token>")';
  if (credentials.missingToken) return 'Bearer credential without a token';
  return undefined;
}

const tchar = "[!#$%&'*+.^_`|~0-9A-Za-z-]";
const authParam = new RegExp(`^${tchar}+\\s*=\\s*(?:${tchar}+|"(?:[^"\\\\]|\\\\.)*")$`);
const schemeAndRest = /^(\S+)(?:\s+([\s\S]*))?$/;

/** Records one credential; returns whether auth-params may follow it. */
function addCredential(result: AuthorizationCredentials, credential: string): boolean {
  const [, first = '', rest] = schemeAndRest.exec(credential) ?? [];
  const scheme = first.toLowerCase();
  if (rest === undefined) {
    // One word: a scheme on its own, or a token whose scheme was left out.
    if (scheme === 'bearer') result.missingToken = true;
    else if (schemeName.test(first)) result.otherSchemes.push(scheme);
    else result.missingScheme = true;
    return scheme !== 'bearer';
  }
  if (scheme === 'bearer') {
    result.bearerTokens.push(rest.trim());
    return false;
  }
  result.otherSchemes.push(scheme);
  return true;
}

/** Scheme names (Negotiate, Basic …) are short words; a JWT has dots and is long. */
const schemeName = /^[A-Za-z][A-Za-z0-9-]{0,19}$/;

function splitOutsideQuotes(value: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (quoted && c === '\\') i++;
    else if (c === '"') quoted = !quoted;
    else if (c === ',' && !quoted) {
      parts.push(value.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(value.slice(start));
  return parts;
}
