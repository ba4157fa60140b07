/**
 * Keys that verify JWT signatures, imported once into node:crypto KeyObjects (importing per token
 * is what makes OpenSSL 3 slow). A key knows its kind, so a token whose algorithm needs the other
 * kind is refused: an HS256 token is never checked against an RSA public key used as an HMAC secret.
 */
import { createPublicKey, createSecretKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { isJwtAlgorithm, type JwtAlgorithm, type KeyKind } from './jwt-algorithms.ts';

export interface VerificationKey {
  kind: KeyKind;
  key: KeyObject;
  /** The JWK `kid`, when the key came from a key set. */
  kid?: string;
  /** The JWK `alg`: the key then verifies only this algorithm. */
  alg?: JwtAlgorithm;
}

export class KeyImportError extends Error {
  override readonly name = 'KeyImportError';
}

/** RFC 7518 §3.3: RSA keys below 2048 bits are refused. */
const minRsaBits = 2048;

export function secretKey(secret: string | Uint8Array): VerificationKey {
  const bytes = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
  if (bytes.length === 0) throw new KeyImportError('HMAC secret is empty');
  return { kind: 'secret', key: createSecretKey(bytes) };
}

/** An RSA public key (SPKI or PKCS#1 PEM, or an X.509 certificate). */
export function publicKeyFromPem(pem: string): VerificationKey {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch (err) {
    throw new KeyImportError(`cannot read public key PEM: ${(err as Error).message}`);
  }
  return { kind: checkRsa(key), key };
}

/** A public key from a JWK (`kty: RSA`); `use: enc` keys are refused. */
export function keyFromJwk(jwk: JsonWebKey): VerificationKey {
  if (jwk.kty !== 'RSA') throw new KeyImportError(`unsupported key type ${JSON.stringify(jwk.kty)}`);
  if (jwk.use !== undefined && jwk.use !== 'sig') throw new KeyImportError(`key use ${jwk.use} is not sig`);
  const alg = jwk.alg as string | undefined;
  if (alg !== undefined && !isJwtAlgorithm(alg)) throw new KeyImportError(`unsupported key alg ${alg}`);
  let key: KeyObject;
  try {
    // Only the public members: a published private key must not make us hold private material.
    key = createPublicKey({ key: { kty: 'RSA', n: jwk.n, e: jwk.e }, format: 'jwk' });
  } catch (err) {
    throw new KeyImportError(`cannot import JWK: ${(err as Error).message}`);
  }
  const kid = typeof jwk.kid === 'string' ? jwk.kid : undefined;
  return { kind: checkRsa(key), key, ...(kid !== undefined && { kid }), ...(alg !== undefined && { alg }) };
}

/**
 * `JWT_SECRET_KEY` as RIG reads it: a PEM block is an RSA public key, anything else an HMAC
 * secret. Escaped newlines (`\n` in one-line environment values) are accepted in a PEM.
 */
export function keyFromConfigValue(value: string): VerificationKey {
  const text = value.trim();
  if (!text.startsWith('-----BEGIN')) return secretKey(value);
  return publicKeyFromPem(text.includes('\n') ? text : text.replaceAll('\\n', '\n'));
}

function checkRsa(key: KeyObject): KeyKind {
  if (key.asymmetricKeyType !== 'rsa')
    throw new KeyImportError(`unsupported public key type ${key.asymmetricKeyType ?? 'unknown'}`);
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < minRsaBits) throw new KeyImportError(`RSA key of ${bits} bits is too short (min ${minRsaBits})`);
  return 'rsa';
}
