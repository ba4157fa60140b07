/** What the hub needs from the auth package: verified claims (blacklist included) and the session id. */
export interface HubAuth {
  /** Resolves with the claims of a valid, non-blacklisted token; rejects with a readable reason. */
  verify(jwt: string): Promise<Record<string, unknown>>;
  sessionIdOf(claims: Record<string, unknown>): string | undefined;
  /** The user name (JWT_USER_FIELD), which the connections API lists and disconnects by. */
  userOf(claims: Record<string, unknown>): string | undefined;
  /** Whether the session is blacklisted now (long-poll sessions check it on every poll). */
  isBlacklisted(sessionId: string): Promise<boolean>;
}

/** Bearer tokens from Authorization header value(s); throws when a credential names no scheme. */
export type BearerTokens = (header: string | string[] | undefined) => string[];
