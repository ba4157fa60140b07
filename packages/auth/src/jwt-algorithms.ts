/**
 * The JWS algorithms Gatehouse verifies: HMAC with a shared secret, RSA PKCS#1 v1.5 and RSA-PSS with
 * a public key. `none` and everything else are refused.
 */

export const jwtAlgorithms = [
  'HS256',
  'HS384',
  'HS512',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
] as const;

export type JwtAlgorithm = (typeof jwtAlgorithms)[number];

/** What kind of key an algorithm needs: a shared secret or an RSA public key. */
export type KeyKind = 'secret' | 'rsa';

export interface AlgorithmSpec {
  kind: KeyKind;
  hash: 'sha256' | 'sha384' | 'sha512';
  /** RSASSA-PSS padding (PS*) instead of PKCS#1 v1.5 (RS*). */
  pss: boolean;
}

const specs: Record<JwtAlgorithm, AlgorithmSpec> = {
  HS256: { kind: 'secret', hash: 'sha256', pss: false },
  HS384: { kind: 'secret', hash: 'sha384', pss: false },
  HS512: { kind: 'secret', hash: 'sha512', pss: false },
  RS256: { kind: 'rsa', hash: 'sha256', pss: false },
  RS384: { kind: 'rsa', hash: 'sha384', pss: false },
  RS512: { kind: 'rsa', hash: 'sha512', pss: false },
  PS256: { kind: 'rsa', hash: 'sha256', pss: true },
  PS384: { kind: 'rsa', hash: 'sha384', pss: true },
  PS512: { kind: 'rsa', hash: 'sha512', pss: true },
};

export function isJwtAlgorithm(name: string): name is JwtAlgorithm {
  return Object.hasOwn(specs, name);
}

export function algorithmSpec(alg: JwtAlgorithm): AlgorithmSpec {
  return specs[alg];
}
