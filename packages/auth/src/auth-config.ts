/**
 * The authentication settings every service that accepts tokens shares (push hub, proxy, blacklist),
 * and the one place that turns them into a verifier, a blacklist check and the signed-token codecs.
 * A service spreads `authConfig` into its own env spec and calls `createAuthFromConfig`.
 */
import {
  bool,
  ConfigError,
  type ConfigOf,
  duration,
  type Field,
  int,
  list,
  optionalStr,
  str,
} from '@gatehouse/service-kit';
import type { Store } from '@gatehouse/store';
import { BlacklistCheck } from './blacklist-check.ts';
import { parseJsonPointer } from './json-pointer.ts';
import { JwksKeySource } from './jwks.ts';
import { checkJwksUrl, jwksUrl } from './jwks-url.ts';
import { algorithmSpec, isJwtAlgorithm, type JwtAlgorithm, jwtAlgorithms } from './jwt-algorithms.ts';
import { JwtVerifier } from './jwt-verifier.ts';
import { type KeySource, StaticKeySource } from './key-source.ts';
import { SessionFields } from './session.ts';
import { type AuthenticatedSession, SessionTokenCheck } from './session-token-check.ts';
import { SignedTokenCodec } from './signed-token.ts';
import { KeyImportError, keyFromConfigValue, type VerificationKey } from './verification-key.ts';

export const authConfig = {
  JWT_SECRET_KEY: optionalStr('JWT key: an HMAC secret, or an RSA public key in PEM (for RS*/PS*)'),
  JWT_ALG: algorithmList(
    'accepted JWT algorithms (comma list of HS256/384/512, RS256/384/512, PS256/384/512)',
  ),
  JWT_JWKS_URL: jwksUrl(
    'URL of a JSON Web Key Set with the RSA keys that sign tokens (key rotation by kid); https, or http to a loopback address, or any http with JWT_JWKS_ALLOW_HTTP',
  ),
  JWT_JWKS_ALLOW_HTTP: bool(
    'accept a plain-http JWT_JWKS_URL to a non-loopback host (anyone on the path could swap the keys)',
    false,
  ),
  JWT_JWKS_REFRESH: duration('how often the JWKS is fetched again (0: only on an unknown kid)', '10m', {
    min: '10s',
    off: true,
  }),
  JWT_CLOCK_LEEWAY: duration('clock difference tolerated for exp and nbf', '5s', { min: '0ms', max: '5m' }),
  JWT_ISSUER: list('accepted iss values (comma list; empty: not checked)'),
  JWT_AUDIENCE: list('accepted aud values, one must match (comma list; empty: not checked)'),
  JWT_REQUIRE_EXP: bool(
    'refuse tokens without an exp claim, which would never expire (matters where a key is set: without one every token is refused)',
    true,
  ),
  JWT_SESSION_FIELD: jsonPointer(
    'JSON pointer to the session id in the claims (also used for the blacklist)',
    '/jti',
  ),
  JWT_USER_FIELD: jsonPointer('JSON pointer to the user name in the claims', '/username'),
  JWT_CACHE_SIZE: int('verified tokens kept in memory (0: verify every time)', 10_000, { min: 0 }),
  JWT_CACHE_MAX_BYTES: int(
    'estimated bytes the verified tokens kept in memory may take together (3 per token character + 256 each)',
    32 * 1024 * 1024,
    { min: 0 },
  ),
  JWT_FAILURE_CACHE_SIZE: int(
    'refused tokens remembered (by digest, apart from verified ones) so a repeated forgery costs no crypto',
    1_000,
    { min: 0 },
  ),
  BLACKLIST_NEGATIVE_CACHE: duration(
    'how long a "not blacklisted" answer is reused (0: ask the store each time)',
    '0',
    { min: '100ms', off: true },
  ),
  TOKEN_SECRET: tokenSecret(
    'secret for connection tokens and correlation ids; every replica must share it (min 16 characters, e.g. `openssl rand -hex 32`)',
  ),
};

/** The settings as read, JWT_JWKS_URL checked against JWT_JWKS_ALLOW_HTTP (jwks-url.ts). */
export type AuthConfig = ConfigOf<typeof authConfig>;

export interface Auth {
  readonly verifier: JwtVerifier;
  readonly sessions: SessionFields;
  readonly blacklist: BlacklistCheck;
  readonly connectionTokens: SignedTokenCodec;
  readonly correlationIds: SignedTokenCodec;
  /** Things an operator should hear about at start-up (development secret, no key …). */
  readonly warnings: readonly string[];
  /** Verifies a token and refuses a blacklisted session (see SessionTokenCheck). */
  verifyAndCheck(token: string): Promise<AuthenticatedSession>;
  /** Starts the blacklist watch and fetches the JWKS; rejects when either fails. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export interface AuthOptions {
  /** Told about JWKS fetch failures after start (the old keys stay in use). */
  onJwksError?: (err: Error) => void;
  now?: () => number;
}

/** Throws a ConfigError when the key settings contradict each other or a key cannot be read. */
export function createAuthFromConfig(config: AuthConfig, store: Store, options: AuthOptions = {}): Auth {
  const warnings: string[] = [];
  const now = options.now ?? Date.now;
  const staticKey = readStaticKey(config, warnings);
  checkJwksUrl(config.JWT_JWKS_URL, config.JWT_JWKS_ALLOW_HTTP);
  const jwks =
    config.JWT_JWKS_URL === undefined
      ? undefined
      : new JwksKeySource({
          url: config.JWT_JWKS_URL,
          refreshIntervalMs: config.JWT_JWKS_REFRESH,
          ...(options.onJwksError && { onError: options.onJwksError }),
        });
  const keys: KeySource[] = [];
  if (staticKey) keys.push(new StaticKeySource(staticKey));
  if (jwks) keys.push(jwks);
  if (keys.length === 0)
    warnings.push('no JWT key configured (JWT_SECRET_KEY, JWT_JWKS_URL): every token is refused');
  else warnings.push(...uncheckedClaims(config));

  const verifier = new JwtVerifier({
    keys,
    algorithms: config.JWT_ALG,
    clockLeewayMs: config.JWT_CLOCK_LEEWAY,
    issuers: config.JWT_ISSUER,
    audiences: config.JWT_AUDIENCE,
    requireExp: config.JWT_REQUIRE_EXP,
    cacheSize: config.JWT_CACHE_SIZE,
    cacheMaxBytes: config.JWT_CACHE_MAX_BYTES,
    failureCacheSize: config.JWT_FAILURE_CACHE_SIZE,
    now,
  });
  const sessions = new SessionFields({
    sessionField: config.JWT_SESSION_FIELD,
    userField: config.JWT_USER_FIELD,
  });
  const blacklist = new BlacklistCheck(store, { negativeCacheMs: config.BLACKLIST_NEGATIVE_CACHE, now });
  const tokenCheck = new SessionTokenCheck({ verifier, sessions, blacklist });
  return {
    verifier,
    sessions,
    blacklist,
    connectionTokens: new SignedTokenCodec(config.TOKEN_SECRET, 'connection'),
    correlationIds: new SignedTokenCodec(config.TOKEN_SECRET, 'correlation'),
    warnings,
    verifyAndCheck: (token) => tokenCheck.verifyAndCheck(token),
    async start() {
      await blacklist.start();
      await jwks?.start();
    },
    async close() {
      await jwks?.close();
      await blacklist.close();
    },
  };
}

/** What a key accepts that the operator may not mean to: docs/security.md, "Before production". */
function uncheckedClaims(config: AuthConfig): string[] {
  const warnings: string[] = [];
  if (config.JWT_ISSUER.length === 0)
    warnings.push('JWT_ISSUER is not set: tokens of any issuer signed with the key are accepted');
  if (config.JWT_AUDIENCE.length === 0)
    warnings.push('JWT_AUDIENCE is not set: tokens for any audience signed with the key are accepted');
  if (!config.JWT_REQUIRE_EXP)
    warnings.push('JWT_REQUIRE_EXP=false: tokens without exp are accepted and never expire');
  return warnings;
}

function readStaticKey(config: AuthConfig, warnings: string[]): VerificationKey | undefined {
  if (config.JWT_SECRET_KEY === undefined) return undefined;
  let key: VerificationKey;
  try {
    key = keyFromConfigValue(config.JWT_SECRET_KEY);
  } catch (err) {
    if (err instanceof KeyImportError) throw new ConfigError([`JWT_SECRET_KEY: ${err.message}`]);
    throw err;
  }
  const usable = config.JWT_ALG.filter((alg) => algorithmSpec(alg).kind === key.kind);
  if (usable.length === 0) {
    const what = key.kind === 'rsa' ? 'an RSA public key' : 'an HMAC secret';
    throw new ConfigError([
      `JWT_SECRET_KEY is ${what}, but JWT_ALG (${config.JWT_ALG.join(',')}) has no algorithm for it`,
    ]);
  }
  if (key.kind === 'secret' && Buffer.byteLength(config.JWT_SECRET_KEY) < 32)
    warnings.push(
      'JWT_SECRET_KEY is shorter than 32 bytes: HS256 secrets should be at least as long as the hash',
    );
  return key;
}

function algorithmList(description: string): Field<JwtAlgorithm[]> {
  const names = list(description, ['HS256']);
  return {
    ...names,
    parse(raw) {
      const algs = names.parse(raw).map((name) => name.toUpperCase());
      const unknown = algs.filter((alg) => !isJwtAlgorithm(alg));
      if (unknown.length > 0)
        throw new Error(`unsupported ${unknown.join(', ')} (use ${jwtAlgorithms.join(', ')})`);
      if (algs.length === 0) throw new Error('needs at least one algorithm');
      return [...new Set(algs as JwtAlgorithm[])];
    },
  };
}

/** Required: a secret from the source would let anyone who read it forge tokens. */
function tokenSecret(description: string): Field<string> {
  return {
    description,
    defaultText: '(required)',
    parse(raw) {
      if (raw === undefined)
        throw new Error(
          'is required: a random secret of at least 16 characters that every replica shares (e.g. `openssl rand -hex 32`)',
        );
      if (raw.length < 16) throw new Error('must be at least 16 characters');
      return raw;
    },
  };
}

function jsonPointer(description: string, fallback: string): Field<string> {
  const text = str(description, fallback);
  return {
    ...text,
    parse(raw) {
      const pointer = text.parse(raw);
      parseJsonPointer(pointer);
      return pointer;
    },
  };
}
