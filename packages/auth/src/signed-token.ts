/**
 * Opaque, URL-safe, authenticated tokens naming a replica and an id local to it: the connection
 * token a client uses to change its subscriptions, and the correlation id of a proxied request.
 * Any replica can read the owner out of a token and route to it; a forged, altered or expired token
 * decodes to undefined. They replace RIG's AES-GCM-encrypted Erlang PIDs: the content is not
 * secret, only its integrity matters, so an HMAC is enough.
 *
 * Layout (version 3) before base64url: version (1 byte) ‖ expiry (4 bytes, big-endian seconds since
 * the Unix epoch, 0: none) ‖ replica length (1 byte) ‖ holder tag length (1 byte, 0 or 8) ‖
 * replica ‖ holder tag ‖ id ‖ MAC (16 bytes), the MAC being HMAC-SHA256 over everything before it,
 * truncated to 128 bits. The MAC key is derived from the secret, the version and a purpose string,
 * so a connection token is never accepted as a correlation id, and a token of another version never
 * verifies. Versions 1 (no expiry) and 2 (no holder) are refused.
 *
 * The holder tag binds a token to who it was issued to (the push hub: the client's address), so a
 * copy presented by someone else can be told apart (`heldBy`): the first 8 bytes of
 * HMAC-SHA256(key, "holder" ‖ 0 ‖ holder). It is keyed, so the token does not reveal the holder
 * (an unkeyed hash of an IPv4 address is reversed by trying all of them), and under the MAC, so it
 * cannot be changed.
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

/** What `encode` takes: the payload, and who the token is issued to (only its tag is written). */
export interface SignedTokenInput extends SignedTokenPayload {
  holder?: string;
}

const version = 3;
const macLength = 16;
const headerLength = 7;
const holderTagLength = 8;
const maxReplicaBytes = 255;
const maxExpirySeconds = 0xffff_ffff;
const holderPrefix = Buffer.from('holder\x00', 'latin1');

export class SignedTokenCodec {
  readonly purpose: string;
  /** HMAC-SHA256 under the derived key (keyed-hmac.ts). */
  private readonly hmac: KeyedHmac;
  private readonly now: () => number;
  /**
   * `holder` ‖ 0 ‖ the holder, written over the last one: holders are client addresses (an IPv6 /64
   * fits), and a Buffer of its own was garbage of every connect; a longer one gets its own.
   */
  private readonly holderInput = Buffer.alloc(holderPrefix.length + 64);

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
  encode(payload: SignedTokenInput): string {
    const replicaLength = Buffer.byteLength(payload.replica, 'utf8');
    if (replicaLength > maxReplicaBytes) throw new Error(`replica id longer than ${maxReplicaBytes} bytes`);
    const tagLength = payload.holder === undefined ? 0 : holderTagLength;
    const idAt = headerLength + replicaLength + tagLength;
    const bodyLength = idAt + Buffer.byteLength(payload.id, 'utf8');
    const token = Buffer.allocUnsafe(bodyLength + macLength);
    token[0] = version;
    token.writeUInt32BE(expirySeconds(payload.expiresAt), 1);
    token[5] = replicaLength;
    token[6] = tagLength;
    token.write(payload.replica, headerLength, 'utf8');
    if (payload.holder !== undefined) token.set(this.holderTag(payload.holder), headerLength + replicaLength);
    token.write(payload.id, idAt, 'utf8');
    token.set(this.mac(token.subarray(0, bodyLength)), bodyLength);
    return token.toString('base64url');
  }

  /** The payload, or undefined for anything that is not an unaltered, unexpired token of this purpose. */
  decode(token: string): SignedTokenPayload | undefined {
    return this.open(token)?.payload;
  }

  /** Whether the token is valid (as `decode`) and was issued to `holder`; false for one issued to nobody. */
  heldBy(token: string, holder: string): boolean {
    const tag = this.open(token)?.holderTag;
    return tag !== undefined && timingSafeEqual(tag, this.holderTag(holder));
  }

  private open(
    token: string,
  ): { payload: SignedTokenPayload; holderTag: Uint8Array | undefined } | undefined {
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
    const tagLength = body[6]!;
    const idAt = replicaEnd + tagLength;
    if ((tagLength !== 0 && tagLength !== holderTagLength) || idAt > body.length) return undefined;
    return {
      payload: {
        replica: body.subarray(headerLength, replicaEnd).toString('utf8'),
        id: body.subarray(idAt).toString('utf8'),
        ...(expiry !== 0 && { expiresAt: expiry * 1000 }),
      },
      holderTag: tagLength === 0 ? undefined : body.subarray(replicaEnd, idAt),
    };
  }

  /**
   * The first 8 bytes of HMAC-SHA256(key, "holder" ‖ 0 ‖ holder); valid until the next MAC (a view
   * of the reused MAC bytes, as `mac`: both callers use it at once, and a copy was an ArrayBuffer
   * of its own per connect).
   */
  private holderTag(holder: string): Uint8Array {
    const length = holderPrefix.length + Buffer.byteLength(holder, 'utf8');
    const input = length <= this.holderInput.length ? this.holderInput : Buffer.alloc(length);
    input.set(holderPrefix);
    input.write(holder, holderPrefix.length, 'utf8');
    return this.hmac(input.subarray(0, length)).subarray(0, holderTagLength);
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
