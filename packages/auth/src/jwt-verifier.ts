/**
 * Verifies compact JWS tokens: the signature synchronously with node:crypto (signature-check.ts,
 * one check per key and algorithm), everything around it here, and remembers verified tokens so a
 * repeated token costs one Map lookup instead of any crypto (once the cache is full, a token is
 * kept from its second sighting: doorkeeper.ts).
 *
 * Rules: the header's `alg` must be in the configured list (`none` never is) and must fit the kind
 * of key (no HMAC with an RSA public key); `crit` extensions are refused; `exp` and `nbf` are
 * checked with a clock leeway; `iss` and `aud` when configured. These run before the signature
 * check sees the token, so a refusal says what is wrong in our words (written to follow "could not decode JWT: ").
 */
import { createHash } from 'node:crypto';
import { Doorkeeper } from './doorkeeper.ts';
import { ExpiringCache } from './expiring-cache.ts';
import { type AlgorithmSpec, algorithmSpec, isJwtAlgorithm, type JwtAlgorithm } from './jwt-algorithms.ts';
import type { KeySource } from './key-source.ts';
import type { VerificationKey } from './verification-key.ts';

export type JwtClaims = Readonly<Record<string, unknown>>;

export type JwtErrorCode =
  | 'no_key'
  | 'malformed'
  | 'algorithm'
  | 'unknown_key'
  | 'invalid_signature'
  | 'expired'
  | 'not_yet_valid'
  | 'claim'
  | 'blacklisted';

export class JwtError extends Error {
  override readonly name = 'JwtError';
  readonly code: JwtErrorCode;
  constructor(code: JwtErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

export interface JwtVerifierOptions {
  keys: readonly KeySource[];
  /** Algorithms accepted in the token header. */
  algorithms: readonly JwtAlgorithm[];
  /** Tolerated clock difference for `exp` and `nbf`, in ms (default 0). */
  clockLeewayMs?: number;
  /** Accepted `iss` values; empty or absent: not checked. */
  issuers?: readonly string[];
  /** Accepted `aud` values (one must match); empty or absent: not checked. */
  audiences?: readonly string[];
  /** Refuse tokens without `exp` (default false, as RIG's example tokens all carry one). */
  requireExp?: boolean;
  /** Verified tokens kept (default 10,000; 0 turns the cache off). */
  cacheSize?: number;
  /** Estimated bytes the verified tokens may take together (default 32 MiB; see entryBytes). */
  cacheMaxBytes?: number;
  /** Refused tokens remembered, by digest, in a store of their own (default 1,000; 0: none). */
  failureCacheSize?: number;
  /** Longest time a verified token is trusted without checking again, in ms (default 5 min). */
  cacheMaxTtlMs?: number;
  /** How long a forged, expired or wrong-claims token is remembered, in ms (default 10 s). */
  failureCacheTtlMs?: number;
  now?: () => number;
}

export interface JwtVerifierStats {
  cacheHits: number;
  cacheMisses: number;
  signatureChecks: number;
  cachedTokens: number;
  /** Estimated bytes of the verified tokens held. */
  cachedBytes: number;
  cachedFailures: number;
}

type Verdict = { claims: JwtClaims } | { error: JwtErrorCode; message: string };

interface Header {
  alg: JwtAlgorithm;
  kid: string | undefined;
}

/**
 * Estimated memory of one verified token in the cache: the token string (the key, one byte per
 * character as tokens are ASCII), its claims as objects (a few times their JSON, which is at most
 * the token's length) and the slot itself. An estimate meant to be on the high side.
 */
export function entryBytes(token: string): number {
  return 3 * token.length + 256;
}

/** A refused token is remembered by its SHA-256 (32 bytes), whatever its length. */
const failureEntryBytes = 200;

/**
 * Failures worth remembering: they cost a signature check, and cannot heal by waiting or by new keys
 * arriving. Tokens refused before any crypto (malformed, wrong alg) are cheaper to refuse again than
 * to let them push good tokens out of the cache.
 */
const rememberedFailures = new Set<JwtErrorCode>(['invalid_signature', 'expired', 'claim']);
/** Three base64url parts; the signature may be empty. */
const compactJws = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
/** check()'s answer when no key has the token's `kid`: look for new keys, then check again. */
const unknownKid = Symbol('unknown kid');
/** Accepted token headers remembered, decoded (see headerOf): a few issuers and keys at most. */
const maxHeadersMemoized = 64;
/** Longest header text remembered: a header with `alg`, `typ` and a long `kid` is about 120. */
const maxHeaderMemoLength = 256;

export class JwtVerifier {
  private readonly keys: readonly KeySource[];
  private readonly algorithms: ReadonlySet<string>;
  private readonly leewayMs: number;
  private readonly issuers: ReadonlySet<string>;
  private readonly audiences: ReadonlySet<string>;
  private readonly requireExp: boolean;
  private readonly maxTtlMs: number;
  private readonly failureTtlMs: number;
  private readonly now: () => number;
  /** Verified tokens, by token. */
  private readonly cache: ExpiringCache<string, Verdict>;
  /**
   * Refused tokens, by digest, apart from the verified ones: junk tokens sent by the thousand can
   * only push out other junk, never a valid token, and cost a fixed size however long they are.
   */
  private readonly failures: ExpiringCache<string, Verdict>;
  /** Tokens verified lately, for the cache's admission once it is full. */
  private readonly seen: Doorkeeper;
  /** Accepted header texts, decoded (headerOf). */
  private readonly headers = new Map<string, Header>();
  private keyGeneration: number;
  private readonly counters = { cacheHits: 0, cacheMisses: 0, signatureChecks: 0 };

  constructor(options: JwtVerifierOptions) {
    this.keys = options.keys;
    this.algorithms = new Set(options.algorithms);
    this.leewayMs = options.clockLeewayMs ?? 0;
    this.issuers = new Set(options.issuers ?? []);
    this.audiences = new Set(options.audiences ?? []);
    this.requireExp = options.requireExp ?? false;
    this.maxTtlMs = options.cacheMaxTtlMs ?? 5 * 60_000;
    this.failureTtlMs = options.failureCacheTtlMs ?? 10_000;
    this.now = options.now ?? Date.now;
    this.cache = new ExpiringCache(options.cacheSize ?? 10_000, {
      maxBytes: options.cacheMaxBytes ?? 32 * 1024 * 1024,
      weigh: entryBytes,
    });
    this.failures = new ExpiringCache(options.failureCacheSize ?? 1_000, {
      maxBytes: (options.failureCacheSize ?? 1_000) * failureEntryBytes,
      weigh: () => failureEntryBytes,
    });
    this.seen = new Doorkeeper(2 * this.cache.capacity);
    this.keyGeneration = this.currentKeyGeneration();
  }

  /** Resolves with the (frozen) claims of a valid token; rejects with a JwtError otherwise. */
  async verify(token: string): Promise<JwtClaims> {
    const now = this.now();
    this.dropCacheOnKeyChange();
    let verdict = this.cache.get(token, now);
    if (verdict === undefined && this.failures.size > 0) verdict = this.failures.get(digest(token), now);
    if (verdict !== undefined) this.counters.cacheHits++;
    else {
      this.counters.cacheMisses++;
      // A miss is checked on this turn of the event loop; only a token naming an unknown `kid`
      // waits, for the key sources to look for new keys, and is then checked once more.
      const checked = this.check(token, true);
      verdict = this.remember(token, checked === unknownKid ? await this.checkAfterRefresh(token) : checked);
    }
    if ('claims' in verdict) return verdict.claims;
    throw new JwtError(verdict.error, verdict.message);
  }

  stats(): JwtVerifierStats {
    return {
      ...this.counters,
      cachedTokens: this.cache.size,
      cachedBytes: this.cache.bytes,
      cachedFailures: this.failures.size,
    };
  }

  clearCache(): void {
    this.cache.clear();
    this.failures.clear();
  }

  private async checkAfterRefresh(token: string): Promise<Verdict> {
    await this.refreshKeys();
    return this.check(token, false) as Verdict;
  }

  /** Keeps a verdict worth keeping (see rememberedFailures and the doorkeeper). */
  private remember(token: string, verdict: Verdict): Verdict {
    if ('error' in verdict && !rememberedFailures.has(verdict.error)) return verdict;
    // Time read after the (possibly awaited) key refresh, so the entry never outlives the token.
    const now = this.now();
    if ('claims' in verdict) {
      // A full cache takes a token only on its second sighting (doorkeeper.ts): a client that
      // re-sends its token gets it cached from its second request; a token used once costs no
      // insert, no eviction and no garbage.
      if (this.cache.hasRoomFor(token, verdict) || this.seen.sawBefore(token))
        this.cache.set(token, verdict, Math.min(this.validUntil(verdict.claims), now + this.maxTtlMs), now);
    } else this.failures.set(digest(token), verdict, now + this.failureTtlMs, now);
    return verdict;
  }

  /**
   * The verdict on a token, or `unknownKid` when no key matched its `kid` and `mayRefresh`: the
   * caller then asks the key sources for new keys and checks again without it.
   */
  private check(token: string, mayRefresh: boolean): Verdict | typeof unknownKid {
    try {
      const claims = this.claimsOf(token, mayRefresh);
      return claims === unknownKid ? unknownKid : { claims };
    } catch (err) {
      if (!(err instanceof JwtError)) throw err;
      return { error: err.code, message: err.message };
    }
  }

  private claimsOf(token: string, mayRefresh: boolean): JwtClaims | typeof unknownKid {
    if (this.keys.length === 0) throw new JwtError('no_key', 'no JWT key configured');
    // The signature may be empty (alg none), so that such a token is refused for its algorithm.
    if (!compactJws.test(token)) throw new JwtError('malformed', 'malformed token');
    const headerEnd = token.indexOf('.');
    const payloadEnd = token.indexOf('.', headerEnd + 1);
    const header = this.headerOf(token.slice(0, headerEnd));
    const found = this.candidates(header.kid);
    if (found.length === 0 && mayRefresh) return unknownKid;
    const keys = this.fittingKeys(header, algorithmSpec(header.alg), found);
    if (!keys.some((key) => this.signedBy(token, header.alg, key)))
      throw new JwtError('invalid_signature', 'invalid signature');
    const claims = decodeJsonObject(token.slice(headerEnd + 1, payloadEnd), 'payload');
    this.checkClaims(claims);
    return deepFreeze(claims);
  }

  /**
   * The header, read once per distinct header text: the tokens of one issuer and key share it, so a
   * stream of new tokens decodes only their payloads. Only accepted headers are kept, short ones,
   * and a full table starts over, so junk headers cannot grow it or lock good ones out for good.
   */
  private headerOf(part: string): Header {
    let header = this.headers.get(part);
    if (header !== undefined) return header;
    header = this.readHeader(part);
    if (part.length <= maxHeaderMemoLength) {
      if (this.headers.size >= maxHeadersMemoized) this.headers.clear();
      this.headers.set(part, header);
    }
    return header;
  }

  private readHeader(part: string): Header {
    const header = decodeJsonObject(part, 'header');
    const { alg, kid, crit } = header;
    if (typeof alg !== 'string') throw new JwtError('malformed', 'malformed token: header has no alg');
    if (!isJwtAlgorithm(alg) || !this.algorithms.has(alg))
      throw new JwtError('algorithm', `algorithm ${alg} not allowed`);
    if (crit !== undefined) throw new JwtError('malformed', 'unsupported critical header parameters');
    if (kid !== undefined && typeof kid !== 'string')
      throw new JwtError('malformed', 'malformed token: kid is not a string');
    return { alg, kid };
  }

  /** The keys found for the token's `kid` that fit its algorithm. */
  private fittingKeys(header: Header, spec: AlgorithmSpec, found: VerificationKey[]): VerificationKey[] {
    if (found.length === 0)
      throw new JwtError(
        'unknown_key',
        header.kid === undefined ? 'no JWT key available' : `unknown key id ${JSON.stringify(header.kid)}`,
      );
    const fitting = found.filter(
      (k) => k.kind === spec.kind && (k.alg === undefined || k.alg === header.alg),
    );
    if (fitting.length === 0) {
      const other = found.some((k) => k.kind === spec.kind)
        ? 'a key made for another algorithm'
        : keyName(found[0]!);
      throw new JwtError('algorithm', `algorithm ${header.alg} cannot be used with ${other}`);
    }
    return fitting;
  }

  private candidates(kid: string | undefined): VerificationKey[] {
    if (this.keys.length === 1) return this.keys[0]!.candidates(kid) as VerificationKey[];
    return this.keys.flatMap((source) => source.candidates(kid));
  }

  private async refreshKeys(): Promise<boolean> {
    const results = await Promise.all(this.keys.map((source) => source.refresh?.() ?? false));
    return results.includes(true);
  }

  /** Whether `key` signed the token. */
  private signedBy(token: string, alg: JwtAlgorithm, key: VerificationKey): boolean {
    this.counters.signatureChecks++;
    return key.checkFor(alg)(token);
  }

  private checkClaims(claims: Record<string, unknown>): void {
    const now = this.now();
    const exp = numericDate(claims, 'exp');
    const nbf = numericDate(claims, 'nbf');
    numericDate(claims, 'iat');
    if (exp === undefined && this.requireExp) throw new JwtError('claim', 'token has no exp claim');
    if (exp !== undefined && now >= exp * 1000 + this.leewayMs)
      throw new JwtError('expired', 'token expired');
    if (nbf !== undefined && now + this.leewayMs < nbf * 1000)
      throw new JwtError('not_yet_valid', 'token not yet valid');
    if (this.issuers.size > 0 && !(typeof claims.iss === 'string' && this.issuers.has(claims.iss)))
      throw new JwtError('claim', 'unexpected issuer');
    if (this.audiences.size > 0 && !audienceMatches(claims.aud, this.audiences))
      throw new JwtError('claim', 'unexpected audience');
  }

  /** When a verified token stops being valid: its `exp` plus the leeway. */
  private validUntil(claims: JwtClaims): number {
    const exp = claims.exp;
    return typeof exp === 'number' ? exp * 1000 + this.leewayMs : Number.POSITIVE_INFINITY;
  }

  private currentKeyGeneration(): number {
    let sum = 0;
    for (const source of this.keys) sum += source.generation;
    return sum;
  }

  /** Tokens verified with a key that was since rotated out must be checked again. */
  private dropCacheOnKeyChange(): void {
    const generation = this.currentKeyGeneration();
    if (generation === this.keyGeneration) return;
    this.keyGeneration = generation;
    this.clearCache();
  }
}

function digest(token: string): string {
  return createHash('sha256').update(token).digest('base64');
}

function keyName(key: VerificationKey): string {
  return key.kind === 'rsa' ? 'an RSA public key' : 'an HMAC secret';
}

/** A base64url part of the token (header, payload) as a JSON object. */
function decodeJsonObject(part: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw new JwtError('malformed', `malformed token: ${what} is not JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new JwtError('malformed', `malformed token: ${what} is not a JSON object`);
  return value as Record<string, unknown>;
}

function numericDate(claims: Record<string, unknown>, name: string): number | undefined {
  const value = claims[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new JwtError('claim', `invalid ${name} claim: not a number`);
  return value;
}

function audienceMatches(aud: unknown, accepted: ReadonlySet<string>): boolean {
  if (typeof aud === 'string') return accepted.has(aud);
  return Array.isArray(aud) && aud.some((a) => typeof a === 'string' && accepted.has(a));
}

/** Cached claims are shared by every caller of the same token: none may change them for the others. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
