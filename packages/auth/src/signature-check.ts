/**
 * One key's check of a token's signature under one algorithm, synchronous, with node:crypto through
 * jwa (the JSON Web Algorithms of jws and jsonwebtoken): an HMAC or RSA verify on the calling
 * thread. jose 6 verifies only through WebCrypto, whose every call is a job on libuv's thread pool
 * and a promise: about 28 µs of CPU for an HS256 token against about 9 µs here, and 56 against
 * about 30 µs for RS256 (bench/src/jwt-verify.bench.ts). jwa checks the signature alone, so the
 * payload is read only once the signature holds (RFC 7519 §7.2), by jwt-verifier.ts.
 */
import type { KeyObject } from 'node:crypto';
import jwa from 'jwa';
import type { JwtAlgorithm } from './jwt-algorithms.ts';

/** Whether the key signed `token` (its `header.payload` under the base64url signature after it). */
export type SignatureCheck = (token: string) => boolean;

/** jwa takes KeyObjects (a secret for HS, a public key for RS and PS); its types predate that. */
type KeyedAlgorithm = { verify(input: string, signature: string, key: KeyObject): boolean };

/** `key`: an HMAC secret's KeyObject, or an RSA public key's. */
export function signatureCheck(key: KeyObject, alg: JwtAlgorithm): SignatureCheck {
  const algorithm = jwa(alg) as unknown as KeyedAlgorithm;
  return (token) => {
    const dot = token.lastIndexOf('.');
    return algorithm.verify(token.slice(0, dot), token.slice(dot + 1), key);
  };
}
