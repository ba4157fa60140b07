/** The JSON shape of a blacklist entry in /v2 and /v3 answers. */
import type { BlacklistEntry, SessionBlacklist } from './session-blacklist.ts';

export interface EntryBody {
  sessionId: string;
  isBlacklisted: true;
  /** Whole seconds left (rounded up); null for an entry without expiry. */
  validityInSeconds: number | null;
  /** ISO 8601; null for an entry without expiry. */
  expiresAt: string | null;
}

export function entryBody(entry: BlacklistEntry, blacklist: SessionBlacklist): EntryBody {
  return {
    sessionId: entry.sessionId,
    isBlacklisted: true,
    validityInSeconds: blacklist.remainingSeconds(entry),
    expiresAt: entry.expiresAt === undefined ? null : new Date(entry.expiresAt).toISOString(),
  };
}

export function entryPath(version: string, sessionId: string): string {
  return `/${version}/session-blacklist/${encodeURIComponent(sessionId)}`;
}
