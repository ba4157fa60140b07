/**
 * HMAC-SHA2 under one key, for the hot paths that MAC thousands of short inputs a second (JWT
 * signatures, connection tokens): the keyed state (the padded key's blocks) is made once with
 * @noble/hashes and copied into one reused state per call, and the MAC is written into reused
 * bytes. node:crypto's createHmac sets up an OpenSSL context and a native object per call, which
 * the garbage collector must finalize: out of a loop that costs several times the hashing.
 */
import { type _HMAC as Hmac, hmac } from '@noble/hashes/hmac.js';
import { sha256, sha384, sha512 } from '@noble/hashes/sha2.js';

const hashes = { sha256, sha384, sha512 };

export type HmacHash = keyof typeof hashes;

/** The MAC of `data`: a view of bytes the next call overwrites, so read it before calling again. */
export type KeyedHmac = ((data: Uint8Array) => Uint8Array) & { readonly outputLen: number };

export function keyedHmac(hash: HmacHash, key: Uint8Array): KeyedHmac {
  const keyed = hmac.create(hashes[hash], key);
  const scratch: Hmac<ReturnType<(typeof hashes)[typeof hash]['create']>> = keyed.clone();
  const mac = new Uint8Array(keyed.outputLen);
  const macOf = (data: Uint8Array) => {
    keyed._cloneInto(scratch).update(data).digestInto(mac);
    return mac;
  };
  return Object.assign(macOf, { outputLen: mac.length });
}
