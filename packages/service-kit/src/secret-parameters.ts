/**
 * Secret query parameters kept out of logs and traces. A URL's query often carries a credential
 * (`?access_token=…`, `?jwt=…` of an EventSource, `?password=…` of a careless client); a log line
 * or a span attribute holding it hands it to everyone who reads logs or traces. Every place that
 * records a URL or query passes it through redactUrl(), which replaces the value of each parameter
 * named in LOG_REDACT_PARAMS (by default access_token, token, password, secret, key, jwt; a name
 * also matches as the last part of a longer one: `api_key`, `client-secret`, `id_token`).
 */
import { list } from './env-config.ts';

export const defaultRedactedParameters = ['access_token', 'token', 'password', 'secret', 'key', 'jwt'];
export const redactedValue = '[REDACTED]';

export const redactionConfig = {
  LOG_REDACT_PARAMS: list(
    'query parameters whose values are replaced by [REDACTED] in every log line and trace record of a URL (case-insensitive; a name also matches as the last _ - or . part of a longer one, api_key); empty: the default list',
    defaultRedactedParameters,
  ),
};

let redacted: readonly string[] = defaultRedactedParameters;

/** The process's list (LOG_REDACT_PARAMS), set once at start by serviceMain and the embedded runner. */
export function setRedactedParameters(names: readonly string[]): void {
  const cleaned = names.map((n) => n.trim().toLowerCase()).filter((n) => n !== '');
  redacted = cleaned.length > 0 ? cleaned : defaultRedactedParameters;
}

/** Whether a parameter name is one whose value is never recorded. */
export function isSecretParameter(name: string): boolean {
  const lower = decoded(name).toLowerCase();
  return redacted.some(
    (secret) => lower === secret || (lower.endsWith(secret) && '_-.'.includes(lower.at(-secret.length - 1)!)),
  );
}

/**
 * The text with the value of every secret parameter of its query replaced: a URL, a path with a
 * query (`/a?b=c`), a bare query string (`b=c&d=e`) or a trace path (`GET /a?b=c`). Text without
 * `=` is returned as it is.
 */
export function redactUrl(text: string): string {
  if (!text.includes('=')) return text;
  const question = text.indexOf('?');
  const hash = text.indexOf('#', question + 1);
  const queryStart = question === -1 ? (text.includes('/') ? -1 : 0) : question + 1;
  if (queryStart === -1) return text;
  const queryEnd = hash === -1 ? text.length : hash;
  return `${text.slice(0, queryStart)}${redactQuery(text.slice(queryStart, queryEnd))}${text.slice(queryEnd)}`;
}

/** A query string (no `?`) with the values of secret parameters replaced. */
export function redactQuery(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq === -1 || !isSecretParameter(pair.slice(0, eq))) return pair;
      return `${pair.slice(0, eq)}=${redactedValue}`;
    })
    .join('&');
}

function decoded(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}
