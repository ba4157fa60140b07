/**
 * Session id and user name from verified claims, through the JSON pointers `JWT_SESSION_FIELD`
 * (default `/jti`) and `JWT_USER_FIELD` (default `/username`). The session id is what connections
 * are registered under and what the blacklist is checked against: unlike RIG, which checked the
 * blacklist against `jti` whatever `JWT_SESSION_FIELD` said, both use this one reader.
 */
import { compileJsonPointer } from './json-pointer.ts';
import type { JwtClaims } from './jwt-verifier.ts';

export interface SessionFieldsOptions {
  sessionField?: string;
  userField?: string;
}

export class SessionFields {
  readonly sessionField: string;
  readonly userField: string;
  private readonly readSession: (claims: unknown) => unknown;
  private readonly readUser: (claims: unknown) => unknown;

  /** Throws a JsonPointerError for a pointer that does not parse. */
  constructor(options: SessionFieldsOptions = {}) {
    this.sessionField = options.sessionField ?? '/jti';
    this.userField = options.userField ?? '/username';
    this.readSession = compileJsonPointer(this.sessionField);
    this.readUser = compileJsonPointer(this.userField);
  }

  /** The session id as a string (numbers are converted); undefined when the claim is absent or not a scalar. */
  sessionId(claims: JwtClaims): string | undefined {
    return idText(this.readSession(claims));
  }

  userName(claims: JwtClaims): string | undefined {
    return idText(this.readUser(claims));
  }
}

function idText(value: unknown): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}
