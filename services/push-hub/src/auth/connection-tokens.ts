/**
 * Connection tokens name the replica holding a connection and carry an expiry; forged, altered or
 * expired ones read as undefined. Each is bound to the address of the client it was issued to
 * (address-key.ts: IPv6 per /64), so a copy presented from elsewhere is no reconnect evidence
 * (reconnect-evidence.ts); it still names its connection for subscription changes, from anywhere. Connection ids are random (96 bits), so a token issued before a
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
  /**
   * A token for a connection of this replica, issued to the client at `clientAddress`, valid for
   * the token TTL, or only until `notAfter`.
   */
  issue(id: string, clientAddress: string, notAfter?: number): string;
  read(token: string): ConnectionAddress | undefined;
  /** Whether the token is valid and was issued to a client at this address (its /64 for IPv6). */
  issuedTo(token: string, clientAddress: string): boolean;
}

/**
 * A new connection id: 16 URL-safe characters (96 random bits), from a pool of random bytes, as a
 * reconnect storm asks for thousands a second.
 */
export const newConnectionId: () => string = randomIds(12, 'base64url');
