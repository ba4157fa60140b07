/**
 * A JSON Web Key Set fetched from an identity provider, so key rotation needs no redeploy (RIG
 * #225). jose's remote key set (`createRemoteJWKSet`) does the fetching: a time limit, no redirects
 * followed, one fetch at a time shared by concurrent callers, the set kept until a fetch succeeds,
 * and the cooldown after which a token naming a `kid` we do not know may fetch again (at most once
 * per `minRefetchIntervalMs`, so a stream of tokens with made-up kids cannot hammer the provider).
 *
 * On top, ours: the set is fetched at start and again every `refreshIntervalMs` by a timer (never on
 * a request's path, so an outage of the provider cannot lock every user out); a fetch that fails is
 * not tried again for `minRefetchIntervalMs` either (jose's cooldown counts from the last success);
 * keys we cannot use are skipped and told about, and a set without a usable key keeps the old one.
 */
import type { JsonWebKey } from 'node:crypto';
import { createRequire } from 'node:module';
import type { createRemoteJWKSet, JSONWebKeySet } from 'jose';
import type { KeySource } from './key-source.ts';
import { keyFromJwk, type VerificationKey } from './verification-key.ts';

export interface JwksKeySourceOptions {
  url: string;
  /** Refetch this often, in ms (default 10 min; 0: only on unknown kids). */
  refreshIntervalMs?: number;
  /** Least time between two fetches triggered by unknown kids, in ms (default 10 s). */
  minRefetchIntervalMs?: number;
  /** Give up on one fetch after this long, in ms (default 5 s). */
  timeoutMs?: number;
  /** Told about failed fetches and skipped keys (the source itself goes on with the keys it has). */
  onError?: (err: Error) => void;
}

// jose (about 50 modules) is loaded by the first key source made, not with the auth package: a
// process without JWT_JWKS_URL never needs it. Node requires an ES module synchronously.
const require = createRequire(import.meta.url);
const loadJose = () => require('jose') as typeof import('jose');

export class JwksError extends Error {
  override readonly name = 'JwksError';
}

export class JwksKeySource implements KeySource {
  readonly url: string;
  private readonly refreshIntervalMs: number;
  private readonly minRefetchIntervalMs: number;
  private readonly onError: (err: Error) => void;
  private readonly remote: ReturnType<typeof createRemoteJWKSet>;
  private byKid = new Map<string, VerificationKey>();
  private all: readonly VerificationKey[] = [];
  private fingerprint = '';
  private lastFailure = Number.NEGATIVE_INFINITY;
  private inFlight: Promise<boolean> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private generationCount = 0;

  constructor(options: JwksKeySourceOptions) {
    this.url = options.url;
    this.refreshIntervalMs = options.refreshIntervalMs ?? 10 * 60_000;
    this.minRefetchIntervalMs = options.minRefetchIntervalMs ?? 10_000;
    this.onError = options.onError ?? (() => {});
    const jose = loadJose();
    this.remote = jose.createRemoteJWKSet(new URL(this.url), {
      timeoutDuration: options.timeoutMs ?? 5_000,
      cooldownDuration: this.minRefetchIntervalMs,
      // Never stale for jose: a stale set would be fetched on a request's path, and a failed fetch
      // there would refuse the token. The timer refreshes instead.
      cacheMaxAge: Number.POSITIVE_INFINITY,
      [jose.customFetch]: (url, init) => this.download(url, init),
    });
  }

  get generation(): number {
    return this.generationCount;
  }

  /** Number of usable keys held now. */
  get size(): number {
    return this.all.length;
  }

  /**
   * Fetches the key set and starts the periodic refresh. Rejects when the first fetch fails; the
   * source still retries (periodically and on unknown kids), so a caller may choose to go on.
   */
  async start(): Promise<void> {
    if (this.refreshIntervalMs > 0 && this.timer === undefined) {
      this.timer = setInterval(() => void this.fetchNow().catch(() => {}), this.refreshIntervalMs);
      this.timer.unref();
    }
    await this.fetchNow();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.inFlight?.catch(() => {});
  }

  candidates(kid: string | undefined): readonly VerificationKey[] {
    if (kid === undefined) return this.all;
    const key = this.byKid.get(kid);
    return key === undefined ? [] : [key];
  }

  /** For an unknown kid: fetches unless one ran recently; resolves whether the keys changed. */
  async refresh(): Promise<boolean> {
    if (this.inFlight) return this.inFlight.catch(() => false);
    if (this.remote.coolingDown || Date.now() - this.lastFailure < this.minRefetchIntervalMs) return false;
    return this.fetchNow().catch(() => false);
  }

  /** One fetch at a time; concurrent callers share it. Rejects (after telling onError) on failure. */
  private fetchNow(): Promise<boolean> {
    this.inFlight ??= this.load().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async load(): Promise<boolean> {
    try {
      await this.remote.reload();
    } catch (err) {
      this.lastFailure = Date.now();
      const error =
        err instanceof JwksError
          ? err
          : new JwksError(`cannot fetch JWKS from ${this.url}: ${(err as Error).message}`);
      this.onError(error);
      throw error;
    }
    return this.adopt(this.remote.jwks());
  }

  /** Takes the set jose now holds (already checked by download); whether it changed. */
  private adopt(set: JSONWebKeySet | undefined): boolean {
    const fingerprint = JSON.stringify(set?.keys ?? []);
    if (fingerprint === this.fingerprint) return false;
    const imported = (set?.keys ?? []).map((jwk) => keyFromJwk(jwk as JsonWebKey));
    this.byKid = new Map(imported.flatMap((k) => (k.kid === undefined ? [] : [[k.kid, k] as const])));
    this.all = imported;
    this.fingerprint = fingerprint;
    this.generationCount++;
    return true;
  }

  /**
   * jose's fetch, with our checks: our error messages, and only the keys we can use handed on, so a
   * set without one fails the fetch and the old keys stay.
   */
  private async download(url: string, init: RequestInit): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(url, init);
    } catch (err) {
      throw new JwksError(`cannot fetch JWKS from ${this.url}: ${(err as Error).message}`);
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      // jose asks not to follow redirects: an https URL that redirects to http would undo what
      // JWT_JWKS_URL's check stands for, and the provider's JWKS URL is not meant to move.
      const moved = response.status >= 300 && response.status < 400 ? ' (redirects are not followed)' : '';
      throw new JwksError(`cannot fetch JWKS from ${this.url}: HTTP ${response.status}${moved}`);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch (err) {
      throw new JwksError(`JWKS from ${this.url} is not JSON: ${(err as Error).message}`);
    }
    const keys = (body as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys)) throw new JwksError(`JWKS from ${this.url} has no "keys" array`);
    const usable = this.usableKeys(keys as JsonWebKey[]);
    if (usable.length === 0) throw new JwksError(`JWKS at ${this.url} has no usable signing key`);
    return Response.json({ keys: usable });
  }

  /** Skips keys we cannot use (encryption keys, EC keys …) rather than failing the whole set. */
  private usableKeys(keys: JsonWebKey[]): JsonWebKey[] {
    return keys.flatMap((jwk) => {
      try {
        keyFromJwk(jwk);
      } catch (err) {
        this.onError(
          new JwksError(`JWKS key ${JSON.stringify(jwk?.kid ?? null)} skipped: ${(err as Error).message}`),
        );
        return [];
      }
      // Only the public members: a published private key must not make us hold private material.
      const { kty, n, e, kid, alg, use } = jwk;
      return [{ kty, n, e, kid, alg, use }];
    });
  }
}
