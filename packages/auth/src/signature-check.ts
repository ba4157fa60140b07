/**
 * One key's check of a token's signature under one algorithm, synchronous, on the calling thread:
 * an RSA verify with node:crypto through jwa (the JSON Web Algorithms of jws and jsonwebtoken), an
 * HMAC through keyed-hmac.ts (between HTTP requests node:crypto's createHmac cost about twice the
 * 4.5 µs it takes in a loop). jose 6 verifies only through WebCrypto, whose every call is a job on
 * libuv's thread pool and a promise: about 28 µs of CPU for an HS256 token against about 9 µs here, and 56 against
 * about 30 µs for RS256 (bench/src/jwt-verify.bench.ts). jwa checks the signature alone, so the
 * payload is read only once the signature holds (RFC 7519 §7.2), by jwt-verifier.ts.
 */
import { type KeyObject, timingSafeEqual } from 'node:crypto';
import jwa from 'jwa';
import { algorithmSpec, type JwtAlgorithm } from './jwt-algorithms.ts';
import { type HmacHash, keyedHmac } from './keyed-hmac.ts';

/** Whether the key signed `token` (its `header.payload` under the base64url signature after it). */
export type SignatureCheck = (token: string) => boolean;

/** jwa takes KeyObjects (a secret for HS, a public key for RS and PS); its types predate that. */
type KeyedAlgorithm = { verify(input: string, signature: string, key: KeyObject): boolean };

/** `key`: an HMAC secret's KeyObject, or an RSA public key's. */
export function signatureCheck(key: KeyObject, alg: JwtAlgorithm): SignatureCheck {
  const spec = algorithmSpec(alg);
  if (spec.kind === 'secret') return hmacCheck(key.export(), spec.hash);
  const algorithm = jwa(alg) as unknown as KeyedAlgorithm;
  return (token) => {
    const dot = token.lastIndexOf('.');
    return algorithm.verify(token.slice(0, dot), token.slice(dot + 1), key);
  };
}

/**
 * HS256/384/512: the MAC of `header.payload` (ASCII: the verifier checked the compact form) against
 * the signature's bytes, in constant time. The signature must be the canonical base64url of the
 * MAC, so one token has one spelling (it is the cache's key).
 */
function hmacCheck(secret: Uint8Array, hash: HmacHash): SignatureCheck {
  const macOf = keyedHmac(hash, secret);
  const signatureChars = Math.ceil((macOf.outputLen * 4) / 3);
  return (token) => {
    const dot = token.lastIndexOf('.');
    const signature = token.slice(dot + 1);
    if (signature.length !== signatureChars) return false;
    const mac = macOf(Buffer.from(token.slice(0, dot), 'latin1'));
    const decoded = Buffer.from(signature, 'base64url');
    return (
      decoded.length === mac.length &&
      timingSafeEqual(decoded, mac) &&
      decoded.toString('base64url') === signature
    );
  };
}
