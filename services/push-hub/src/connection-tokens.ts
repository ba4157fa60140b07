/**
 * Connection tokens name the replica holding a connection and carry an expiry; forged, altered or
 * expired ones read as undefined. Connection ids are random (96 bits), so a token issued before a
 * replica restarted under the same name never names a connection of the new process.
 */

import { randomIds } from '@gatehouse/service-kit';

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

/**
 * A new connection id: 16 URL-safe characters (96 random bits), from a pool of random bytes, as a
 * reconnect storm asks for thousands a second.
 */
export const newConnectionId: () => string = randomIds(12, 'base64url');
