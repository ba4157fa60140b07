/**
 * Keys that verify JWT signatures. A key knows its kind, so a token whose algorithm needs the other
 * kind is refused before any crypto: an HS256 token is never checked against an RSA public key used
 * as an HMAC secret. Keys are read once, with node:crypto, into KeyObjects; a key's check for an
 * algorithm (signature-check.ts) is made on first use and kept.
 */
import { createPublicKey, createSecretKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { isJwtAlgorithm, type JwtAlgorithm, type KeyKind } from './jwt-algorithms.ts';
import { type SignatureCheck, signatureCheck } from './signature-check.ts';

export interface VerificationKey {
  kind: KeyKind;
  /** The JWK `kid`, when the key came from a key set. */
  kid?: string;
  /** The JWK `alg`: the key then verifies only this algorithm. */
  alg?: JwtAlgorithm;
  /** This key's signature check for `alg` (made on first use, then handed out as it is). */
  checkFor(alg: JwtAlgorithm): SignatureCheck;
}

export class KeyImportError extends Error {
  override readonly name = 'KeyImportError';
}

/** RFC 7518 §3.3: RSA keys below 2048 bits are refused. */
const minRsaBits = 2048;

/** An HMAC secret (a string is taken as its UTF-8 bytes, as RIG and jose take it). */
export function secretKey(secret: string | Uint8Array): VerificationKey {
  const bytes = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
  if (bytes.length === 0) throw new KeyImportError('HMAC secret is empty');
  const key = createSecretKey(bytes);
  return { kind: 'secret', checkFor: perAlgorithm((alg) => signatureCheck(key, alg)) };
}

/** An RSA public key (SPKI or PKCS#1 PEM, or an X.509 certificate). */
export function publicKeyFromPem(pem: string): VerificationKey {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch (err) {
    throw new KeyImportError(`cannot read public key PEM: ${(err as Error).message}`);
  }
  checkRsa(key);
  return { kind: 'rsa', checkFor: perAlgorithm((alg) => signatureCheck(key, alg)) };
}

/** A public key from a JWK (`kty: RSA`); `use: enc` keys are refused. */
export function keyFromJwk(jwk: JsonWebKey): VerificationKey {
  if (jwk.kty !== 'RSA') throw new KeyImportError(`unsupported key type ${JSON.stringify(jwk.kty)}`);
  if (jwk.use !== undefined && jwk.use !== 'sig') throw new KeyImportError(`key use ${jwk.use} is not sig`);
  const alg = jwk.alg as string | undefined;
  if (alg !== undefined && !isJwtAlgorithm(alg)) throw new KeyImportError(`unsupported key alg ${alg}`);
  // Only the public members: a published private key must not make us hold private material.
  const publicJwk = { kty: 'RSA', n: jwk.n, e: jwk.e };
  let key: KeyObject;
  try {
    key = createPublicKey({ key: publicJwk, format: 'jwk' });
    checkRsa(key);
  } catch (err) {
    if (err instanceof KeyImportError) throw err;
    throw new KeyImportError(`cannot import JWK: ${(err as Error).message}`);
  }
  const kid = typeof jwk.kid === 'string' ? jwk.kid : undefined;
  return {
    kind: 'rsa',
    ...(kid !== undefined && { kid }),
    ...(alg !== undefined && { alg }),
    checkFor: perAlgorithm((a) => signatureCheck(key, a)),
  };
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

function checkRsa(key: KeyObject): void {
  if (key.asymmetricKeyType !== 'rsa')
    throw new KeyImportError(`unsupported public key type ${key.asymmetricKeyType ?? 'unknown'}`);
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < minRsaBits) throw new KeyImportError(`RSA key of ${bits} bits is too short (min ${minRsaBits})`);
}

/** One check per algorithm, made on first use. */
function perAlgorithm(make: (alg: JwtAlgorithm) => SignatureCheck): (alg: JwtAlgorithm) => SignatureCheck {
  const made = new Map<JwtAlgorithm, SignatureCheck>();
  return (alg) => {
    let check = made.get(alg);
    if (check === undefined) {
      check = make(alg);
      made.set(alg, check);
    }
    return check;
  };
}
