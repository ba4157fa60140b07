/**
 * Opaque, URL-safe, authenticated tokens naming a replica and an id local to it: the connection
 * token a client uses to change its subscriptions, and the correlation id of a proxied request.
 * Any replica can read the owner out of a token and route to it; a forged, altered or expired token
 * decodes to undefined. They replace RIG's AES-GCM-encrypted Erlang PIDs: the content is not
 * secret, only its integrity matters, so an HMAC is enough.
 *
 * Layout (version 2) before base64url: version (1 byte) ‖ expiry (4 bytes, big-endian seconds since
 * the Unix epoch, 0: none) ‖ replica length (1 byte) ‖ replica ‖ id ‖ MAC (16 bytes), the MAC being
 * HMAC-SHA256 over everything before it, truncated to 128 bits. The MAC key is derived from the
 * secret, the version and a purpose string, so a connection token is never accepted as a
 * correlation id, and a token of another version never verifies. Version 1 (no expiry) is refused.
 *
 * Ids must not repeat across restarts of a replica that keeps its name (a pod name): callers put a
 * per-boot random part in them (random connection ids; correlation ids carry a boot epoch), so a
 * token issued before a crash never names something of the new process.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { type KeyedHmac, keyedHmac } from './keyed-hmac.ts';

export interface SignedTokenPayload {
  /** The replica holding the connection or request. */
  replica: string;
  /** Its id within that replica. */
  id: string;
  /** When the token stops being accepted (ms since the Unix epoch, kept to the second); absent: never. */
  expiresAt?: number;
}

const version = 2;
const macLength = 16;
const headerLength = 6;
const maxReplicaBytes = 255;
const maxExpirySeconds = 0xffff_ffff;

export class SignedTokenCodec {
  readonly purpose: string;
  /** HMAC-SHA256 under the derived key (keyed-hmac.ts). */
  private readonly hmac: KeyedHmac;
  private readonly now: () => number;

  constructor(secret: string | Uint8Array, purpose: string, options: { now?: () => number } = {}) {
    if (secret.length === 0) throw new Error('token secret is empty');
    if (purpose === '') throw new Error('token purpose is empty');
    this.purpose = purpose;
    this.now = options.now ?? Date.now;
    const derived = createHmac('sha256', secret)
      .update(`gatehouse signed token v${version}: ${purpose}`)
      .digest();
    this.hmac = keyedHmac('sha256', derived);
  }

  /**
   * Written into one buffer from Node's pool and MACed in place: a reconnect storm issues thousands
   * a second, and each Buffer or native HMAC object of their own was more work for the garbage
   * collector than the hashing (bench/src/connect-burst.bench.ts).
   */
  encode(payload: SignedTokenPayload): string {
    const replicaLength = Buffer.byteLength(payload.replica, 'utf8');
    if (replicaLength > maxReplicaBytes) throw new Error(`replica id longer than ${maxReplicaBytes} bytes`);
    const bodyLength = headerLength + replicaLength + Buffer.byteLength(payload.id, 'utf8');
    const token = Buffer.allocUnsafe(bodyLength + macLength);
    token[0] = version;
    token.writeUInt32BE(expirySeconds(payload.expiresAt), 1);
    token[5] = replicaLength;
    token.write(payload.replica, headerLength, 'utf8');
    token.write(payload.id, headerLength + replicaLength, 'utf8');
    token.set(this.mac(token.subarray(0, bodyLength)), bodyLength);
    return token.toString('base64url');
  }

  /** The payload, or undefined for anything that is not an unaltered, unexpired token of this purpose. */
  decode(token: string): SignedTokenPayload | undefined {
    if (!/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
    const bytes = Buffer.from(token, 'base64url');
    // Unused low bits of the last character would let several spellings carry the same token.
    if (bytes.toString('base64url') !== token) return undefined;
    if (bytes.length < headerLength + macLength || bytes[0] !== version) return undefined;
    const body = bytes.subarray(0, bytes.length - macLength);
    if (!timingSafeEqual(this.mac(body), bytes.subarray(body.length))) return undefined;
    const expiry = body.readUInt32BE(1);
    if (expiry !== 0 && expiry * 1000 <= this.now()) return undefined;
    const replicaEnd = headerLength + body[5]!;
    if (replicaEnd > body.length) return undefined;
    return {
      replica: body.subarray(headerLength, replicaEnd).toString('utf8'),
      id: body.subarray(replicaEnd).toString('utf8'),
      ...(expiry !== 0 && { expiresAt: expiry * 1000 }),
    };
  }

  /** The first 16 bytes of HMAC-SHA256(key, body); valid until the next call. */
  private mac(body: Uint8Array): Uint8Array {
    return this.hmac(body).subarray(0, macLength);
  }
}

/** Whole seconds, rounded up: a token lives at most a second longer than asked, never shorter. */
function expirySeconds(expiresAt: number | undefined): number {
  if (expiresAt === undefined) return 0;
  if (!Number.isFinite(expiresAt) || expiresAt <= 0) throw new Error(`invalid token expiry ${expiresAt}`);
  return Math.min(Math.ceil(expiresAt / 1000), maxExpirySeconds);
}
