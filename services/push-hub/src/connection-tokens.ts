/**
 * Connection tokens name the replica holding a connection and carry an expiry; forged, altered or
 * expired ones read as undefined. Connection ids are random (96 bits), so a token issued before a
 * replica restarted under the same name never names a connection of the new process.
 */
import { randomBytes } from 'node:crypto';

export interface ConnectionAddress {
  replica: string;
  id: string;
  /** When the token stops being accepted (ms since the Unix epoch). */
  expiresAt?: number;
}

export interface ConnectionTokens {
  readonly replica: string;
  /** A token for a connection of this replica, valid for the token TTL, or only until `notAfter`. */
  issue(id: string, notAfter?: number): string;
  read(token: string): ConnectionAddress | undefined;
}

/** A new connection id: 16 URL-safe characters. */
export function newConnectionId(): string {
  return randomBytes(12).toString('base64url');
}
