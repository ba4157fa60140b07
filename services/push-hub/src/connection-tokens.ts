/**
 * Connection tokens name the replica holding a connection and carry an expiry; forged, altered or
 * expired ones read as undefined. Connection ids are random (96 bits), so a token issued before a
 * replica restarted under the same name never names a connection of the new process.
 */
import { randomFillSync } from 'node:crypto';

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

const idBytes = 12;
/**
 * Random bytes for 256 ids, drawn from the CSPRNG in one call: a reconnect storm asks for thousands
 * of ids a second, and one `randomBytes` call per id cost more than the rest of making it. Each
 * slice is used once, as crypto.randomUUID() does with its own pool.
 */
const idPool = Buffer.alloc(idBytes * 256);
let idPoolOffset = idPool.length;

/** A new connection id: 16 URL-safe characters (96 random bits). */
export function newConnectionId(): string {
  if (idPoolOffset === idPool.length) {
    randomFillSync(idPool);
    idPoolOffset = 0;
  }
  const id = idPool.toString('base64url', idPoolOffset, idPoolOffset + idBytes);
  idPoolOffset += idBytes;
  return id;
}
