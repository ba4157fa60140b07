/**
 * Signs compact JWS tokens with node:crypto. Gatehouse itself only verifies; this is for tests,
 * benchmarks and tools that need real tokens (HS* with a secret, RS* and PS* with an RSA private key).
 */
import { constants, createHmac, createSecretKey, type KeyObject, sign } from 'node:crypto';
import { algorithmSpec, type JwtAlgorithm } from './jwt-algorithms.ts';

export interface SignJwtOptions {
  alg: JwtAlgorithm;
  /** An HMAC secret (text, bytes or secret KeyObject) for HS*, an RSA private KeyObject for RS* and PS*. */
  key: KeyObject | string | Uint8Array;
  kid?: string;
  /** Extra or overriding header fields (tests use it to forge headers). */
  header?: Record<string, unknown>;
}

export function signJwt(claims: Record<string, unknown>, options: SignJwtOptions): string {
  const header = {
    alg: options.alg,
    typ: 'JWT',
    ...(options.kid !== undefined && { kid: options.kid }),
    ...options.header,
  };
  const input = `${base64urlJson(header)}.${base64urlJson(claims)}`;
  return `${input}.${signature(options, input).toString('base64url')}`;
}

function signature({ alg, key }: SignJwtOptions, input: string): Buffer {
  const spec = algorithmSpec(alg);
  if (spec.kind === 'secret') {
    const secret =
      typeof key === 'string' || key instanceof Uint8Array ? createSecretKey(Buffer.from(key)) : key;
    return createHmac(spec.hash, secret).update(input).digest();
  }
  if (typeof key === 'string' || key instanceof Uint8Array)
    throw new Error(`${alg} needs an RSA private key`);
  const rsaKey = spec.pss
    ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }
    : key;
  return sign(spec.hash, Buffer.from(input, 'latin1'), rsaKey);
}

function base64urlJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/**
 * `claims` with an `exp` `seconds` from now unless they name one themselves (`exp: undefined` leaves
 * it out): JWT_REQUIRE_EXP, on by default, refuses tokens without.
 */
export function withExpiry(claims: Record<string, unknown>, seconds = 3600): Record<string, unknown> {
  return { exp: Math.floor(Date.now() / 1000) + seconds, ...claims };
}
