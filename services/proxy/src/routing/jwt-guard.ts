/**
 * The token check of `secured: true` endpoints (reference §2.4 step 5). Tokens come from where the
 * API's `auth` says:
 * - `Authorization` (the default header): credentials with an explicit scheme, `Bearer <jwt>`; a
 *   bare token is not taken for a bearer token (spec authentication rule 2);
 * - any other header: the raw token(s), comma-separated;
 * - the query parameter `auth.query_name`: raw token(s), comma-separated, or repeated.
 * The first token found (header before query) must be valid, unexpired and of a session that is
 * not blacklisted; the others are not looked at. RIG tried each until one passed, so a request
 * carrying a thousand forged RS256 tokens cost a thousand signature checks.
 */
import type { IncomingMessage } from 'node:http';
import { type Auth, JwtError, parseAuthorizationHeader } from '@gatehouse/auth';
import type { ApiDefinition, AuthSettings, Endpoint } from '../definitions/index.ts';

export type GuardVerdict = 'allowed' | 'refused' | 'unavailable';

/** Whether a request to this endpoint must carry a valid token: `secured` under `auth_type: jwt`. */
export function requiresToken(api: ApiDefinition, endpoint: Endpoint): boolean {
  return endpoint.secured && api.auth_type === 'jwt';
}

export class JwtGuard {
  private readonly auth: Auth;

  constructor(auth: Auth) {
    this.auth = auth;
  }

  /** `unavailable` when the blacklist could not be read: the caller answers 503, not 401. */
  async check(req: IncomingMessage, settings: AuthSettings): Promise<GuardVerdict> {
    const [token] = tokensOf(req, settings);
    if (token === undefined) return 'refused';
    try {
      await this.auth.verifyAndCheck(token);
      return 'allowed';
    } catch (err) {
      return err instanceof JwtError ? 'refused' : 'unavailable';
    }
  }
}

export function tokensOf(req: IncomingMessage, settings: AuthSettings): string[] {
  const tokens: string[] = [];
  if (settings.use_header) {
    const name = settings.header_name.toLowerCase();
    const value = req.headers[name];
    if (name === 'authorization') tokens.push(...parseAuthorizationHeader(value).bearerTokens);
    else if (value !== undefined) tokens.push(...splitTokens(value));
  }
  if (settings.use_query) tokens.push(...queryTokens(req.url ?? '', settings.query_name));
  return tokens;
}

function queryTokens(url: string, name: string): string[] {
  const q = url.indexOf('?');
  if (q < 0) return [];
  return splitTokens(new URLSearchParams(url.slice(q + 1)).getAll(name));
}

function splitTokens(value: string | string[]): string[] {
  const list = Array.isArray(value) ? value : [value];
  return list
    .flatMap((v) => v.split(','))
    .map((t) => t.trim())
    .filter((t) => t !== '');
}
