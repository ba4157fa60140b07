/**
 * The check every entry point runs on a bearer token: verify it, read its session, refuse it when
 * that session is blacklisted. The blacklist is checked against the same `JWT_SESSION_FIELD` claim
 * that connections are registered under (RIG checked `jti` regardless, §1.2.4 of the reference).
 */
import type { BlacklistCheck } from './blacklist-check.ts';
import { JwtError, type JwtClaims, type JwtVerifier } from './jwt-verifier.ts';
import type { SessionFields } from './session.ts';

export interface AuthenticatedSession {
  claims: JwtClaims;
  /** Absent when the token has no claim at `JWT_SESSION_FIELD`: such a token cannot be blacklisted. */
  sessionId: string | undefined;
  userName: string | undefined;
}

export interface SessionTokenCheckParts {
  verifier: JwtVerifier;
  sessions: SessionFields;
  blacklist: BlacklistCheck;
}

export class SessionTokenCheck {
  private readonly parts: SessionTokenCheckParts;

  constructor(parts: SessionTokenCheckParts) {
    this.parts = parts;
  }

  /**
   * Rejects with a JwtError for an invalid token or a blacklisted session (code `blacklisted`), and
   * with the store's error when the blacklist cannot be read.
   */
  async verifyAndCheck(token: string): Promise<AuthenticatedSession> {
    const { verifier, sessions, blacklist } = this.parts;
    const claims = await verifier.verify(token);
    const sessionId = sessions.sessionId(claims);
    if (sessionId !== undefined && (await blacklist.isBlacklisted(sessionId)))
      throw new JwtError('blacklisted', `session ${sessionId} is blacklisted`);
    return { claims, sessionId, userName: sessions.userName(claims) };
  }
}
