/**
 * One key's check of a token's signature under one algorithm, synchronous, on the calling thread:
 * an RSA verify with node:crypto through jwa (the JSON Web Algorithms of jws and jsonwebtoken), an
 * HMAC with @noble/hashes from a copy of the keyed state made once per key. OpenSSL 3 sets up a
 * whole HMAC context for every node:crypto createHmac, and each is a native object the garbage
 * collector must finalize: between HTTP requests that cost about twice the 4.5 µs it takes in a
 * loop, more than the hashing itself. jose 6 verifies only through WebCrypto, whose every call is a job on libuv's thread pool
 * and a promise: about 28 µs of CPU for an HS256 token against about 9 µs here, and 56 against
 * about 30 µs for RS256 (bench/src/jwt-verify.bench.ts). jwa checks the signature alone, so the
 * payload is read only once the signature holds (RFC 7519 §7.2), by jwt-verifier.ts.
 */
import { type KeyObject, timingSafeEqual } from 'node:crypto';
import { _HMAC as Hmac, hmac } from '@noble/hashes/hmac.js';
import { sha256, sha384, sha512 } from '@noble/hashes/sha2.js';
import jwa from 'jwa';
import { algorithmSpec, type JwtAlgorithm } from './jwt-algorithms.ts';

/** Whether the key signed `token` (its `header.payload` under the base64url signature after it). */
export type SignatureCheck = (token: string) => boolean;

/** jwa takes KeyObjects (a secret for HS, a public key for RS and PS); its types predate that. */
type KeyedAlgorithm = { verify(input: string, signature: string, key: KeyObject): boolean };

/** `key`: an HMAC secret's KeyObject, or an RSA public key's. */
export function signatureCheck(key: KeyObject, alg: JwtAlgorithm): SignatureCheck {
  if (algorithmSpec(alg).kind === 'secret') return hmacCheck(key.export(), algorithmSpec(alg).hash);
  const algorithm = jwa(alg) as unknown as KeyedAlgorithm;
  return (token) => {
    const dot = token.lastIndexOf('.');
    return algorithm.verify(token.slice(0, dot), token.slice(dot + 1), key);
  };
}

const hashes = { sha256, sha384, sha512 };

/**
 * HS256/384/512: the MAC of `header.payload` (ASCII: the verifier checked the compact form) against
 * the signature's bytes, in constant time. The signature must be the canonical base64url of the
 * MAC, so one token has one spelling (it is the cache's key).
 */
function hmacCheck(secret: Uint8Array, hash: keyof typeof hashes): SignatureCheck {
  const keyed = hmac.create(hashes[hash], secret);
  const scratch: Hmac<ReturnType<(typeof hashes)[typeof hash]['create']>> = keyed.clone();
  const mac = new Uint8Array(keyed.outputLen);
  const signatureChars = Math.ceil((mac.length * 4) / 3);
  return (token) => {
    const dot = token.lastIndexOf('.');
    if (token.length - dot - 1 !== signatureChars) return false;
    const bytes = Buffer.from(token, 'latin1');
    keyed._cloneInto(scratch).update(bytes.subarray(0, dot)).digestInto(mac);
    const signature = bytes.subarray(dot + 1);
    const decoded = Buffer.from(signature.toString('latin1'), 'base64url');
    return (
      decoded.length === mac.length &&
      timingSafeEqual(decoded, mac) &&
      decoded.toString('base64url') === token.slice(dot + 1)
    );
  };
}
