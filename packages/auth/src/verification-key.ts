/**
 * Keys that verify JWT signatures. A key knows its kind, so a token whose algorithm needs the other
 * kind is refused before any crypto: an HS256 token is never checked against an RSA public key used
 * as an HMAC secret. jose verifies with WebCrypto CryptoKeys, which are bound to one algorithm, so a
 * key is imported once per algorithm it is asked for and kept (importing per token would cost more
 * than the check itself).
 */
import {
  createPublicKey,
  createSecretKey,
  type JsonWebKey,
  type KeyObject,
  type webcrypto,
} from 'node:crypto';
import { importJWK, importSPKI } from 'jose';
import { algorithmSpec, isJwtAlgorithm, type JwtAlgorithm, type KeyKind } from './jwt-algorithms.ts';

export interface VerificationKey {
  kind: KeyKind;
  /** The JWK `kid`, when the key came from a key set. */
  kid?: string;
  /** The JWK `alg`: the key then verifies only this algorithm. */
  alg?: JwtAlgorithm;
  /** The key as jose verifies `alg` with it (imported on first use, then handed out as it is). */
  forAlgorithm(alg: JwtAlgorithm): webcrypto.CryptoKey | Promise<webcrypto.CryptoKey>;
}

export class KeyImportError extends Error {
  override readonly name = 'KeyImportError';
}

/** RFC 7518 §3.3: RSA keys below 2048 bits are refused. */
const minRsaBits = 2048;

/**
 * An HMAC secret. jose takes secrets as bytes or a KeyObject and imports them into WebCrypto on
 * every verify; an HMAC CryptoKey made once per algorithm skips that.
 */
export function secretKey(secret: string | Uint8Array): VerificationKey {
  const bytes = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
  if (bytes.length === 0) throw new KeyImportError('HMAC secret is empty');
  const key = createSecretKey(bytes);
  return {
    kind: 'secret',
    forAlgorithm: perAlgorithm(async (alg) =>
      key.toCryptoKey({ name: 'HMAC', hash: webCryptoHash(alg) }, false, ['verify']),
    ),
  };
}

/** An RSA public key (SPKI or PKCS#1 PEM, or an X.509 certificate), handed to jose as SPKI. */
export function publicKeyFromPem(pem: string): VerificationKey {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch (err) {
    throw new KeyImportError(`cannot read public key PEM: ${(err as Error).message}`);
  }
  checkRsa(key);
  const spki = key.export({ type: 'spki', format: 'pem' }).toString();
  return { kind: 'rsa', forAlgorithm: perAlgorithm((alg) => importSPKI(spki, alg)) };
}

/** A public key from a JWK (`kty: RSA`); `use: enc` keys are refused. */
export function keyFromJwk(jwk: JsonWebKey): VerificationKey {
  if (jwk.kty !== 'RSA') throw new KeyImportError(`unsupported key type ${JSON.stringify(jwk.kty)}`);
  if (jwk.use !== undefined && jwk.use !== 'sig') throw new KeyImportError(`key use ${jwk.use} is not sig`);
  const alg = jwk.alg as string | undefined;
  if (alg !== undefined && !isJwtAlgorithm(alg)) throw new KeyImportError(`unsupported key alg ${alg}`);
  // Only the public members: a published private key must not make us hold private material.
  const publicJwk = { kty: 'RSA', n: jwk.n, e: jwk.e };
  try {
    checkRsa(createPublicKey({ key: publicJwk, format: 'jwk' }));
  } catch (err) {
    if (err instanceof KeyImportError) throw err;
    throw new KeyImportError(`cannot import JWK: ${(err as Error).message}`);
  }
  const kid = typeof jwk.kid === 'string' ? jwk.kid : undefined;
  return {
    kind: 'rsa',
    ...(kid !== undefined && { kid }),
    ...(alg !== undefined && { alg }),
    forAlgorithm: perAlgorithm(async (a) => (await importJWK(publicJwk, a)) as webcrypto.CryptoKey),
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

/** One import per algorithm, shared by concurrent first callers; a failed import is tried again. */
function perAlgorithm(
  load: (alg: JwtAlgorithm) => Promise<webcrypto.CryptoKey>,
): (alg: JwtAlgorithm) => webcrypto.CryptoKey | Promise<webcrypto.CryptoKey> {
  const imported = new Map<JwtAlgorithm, webcrypto.CryptoKey | Promise<webcrypto.CryptoKey>>();
  return (alg) => {
    const known = imported.get(alg);
    if (known !== undefined) return known;
    const importing = load(alg).then(
      (key) => {
        imported.set(alg, key);
        return key;
      },
      (err: unknown) => {
        imported.delete(alg);
        throw err;
      },
    );
    imported.set(alg, importing);
    return importing;
  };
}

function webCryptoHash(alg: JwtAlgorithm): string {
  return `SHA-${algorithmSpec(alg).hash.slice(3)}`;
}
