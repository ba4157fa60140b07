/**
 * Opaque, URL-safe, authenticated tokens naming a replica and an id local to it: the connection
 * token a client uses to change its subscriptions, and the correlation id of a proxied request.
 * Any replica can read the owner out of a token and route to it; a forged or altered token decodes
 * to undefined. They replace RIG's AES-GCM-encrypted Erlang PIDs: the content is not secret, only
 * its integrity matters, so an HMAC is enough.
 *
 * Layout before base64url: version (1 byte) ‖ replica length (1 byte) ‖ replica ‖ id ‖ MAC (16 bytes),
 * the MAC being HMAC-SHA256 over everything before it, truncated to 128 bits. The MAC key is derived
 * from the secret and a purpose string, so a connection token is never accepted as a correlation id.
 */
import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto';

export interface SignedTokenPayload {
  /** The replica holding the connection or request. */
  replica: string;
  /** Its id within that replica. */
  id: string;
}

const version = 1;
const macLength = 16;
const maxReplicaBytes = 255;

export class SignedTokenCodec {
  readonly purpose: string;
  private readonly key: KeyObject;

  constructor(secret: string | Uint8Array, purpose: string) {
    if (secret.length === 0) throw new Error('token secret is empty');
    if (purpose === '') throw new Error('token purpose is empty');
    this.purpose = purpose;
    const derived = createHmac('sha256', secret)
      .update(`gatehouse signed token v${version}: ${purpose}`)
      .digest();
    this.key = createSecretKey(derived);
  }

  encode(payload: SignedTokenPayload): string {
    const replica = Buffer.from(payload.replica, 'utf8');
    if (replica.length > maxReplicaBytes) throw new Error(`replica id longer than ${maxReplicaBytes} bytes`);
    const body = Buffer.concat([
      Buffer.from([version, replica.length]),
      replica,
      Buffer.from(payload.id, 'utf8'),
    ]);
    return Buffer.concat([body, this.mac(body)]).toString('base64url');
  }

  /** The payload, or undefined for anything that is not an unaltered token of this codec's purpose. */
  decode(token: string): SignedTokenPayload | undefined {
    if (!/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
    const bytes = Buffer.from(token, 'base64url');
    // Unused low bits of the last character would let several spellings carry the same token.
    if (bytes.toString('base64url') !== token) return undefined;
    if (bytes.length < 2 + macLength || bytes[0] !== version) return undefined;
    const body = bytes.subarray(0, bytes.length - macLength);
    if (!timingSafeEqual(this.mac(body), bytes.subarray(body.length))) return undefined;
    const replicaEnd = 2 + bytes[1]!;
    if (replicaEnd > body.length) return undefined;
    return {
      replica: body.subarray(2, replicaEnd).toString('utf8'),
      id: body.subarray(replicaEnd).toString('utf8'),
    };
  }

  private mac(body: Buffer): Buffer {
    return createHmac('sha256', this.key).update(body).digest().subarray(0, macLength);
  }
}
