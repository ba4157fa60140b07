/**
 * A JSON Web Key Set fetched from an identity provider, so key rotation needs no redeploy (RIG
 * #225). Keys are fetched at start, again every `refreshIntervalMs`, and when a token names a `kid`
 * we do not know (at most once per `minRefetchIntervalMs`, so a stream of tokens with made-up kids
 * cannot hammer the provider). A failed fetch keeps the keys we have: an outage of the provider
 * must not lock every user out.
 */
import type { JsonWebKey } from 'node:crypto';
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
  now?: () => number;
}

export class JwksError extends Error {
  override readonly name = 'JwksError';
}

export class JwksKeySource implements KeySource {
  readonly url: string;
  private readonly refreshIntervalMs: number;
  private readonly minRefetchIntervalMs: number;
  private readonly timeoutMs: number;
  private readonly onError: (err: Error) => void;
  private readonly now: () => number;
  private byKid = new Map<string, VerificationKey>();
  private all: readonly VerificationKey[] = [];
  private fingerprint = '';
  private lastAttempt = Number.NEGATIVE_INFINITY;
  private inFlight: Promise<boolean> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private generationCount = 0;

  constructor(options: JwksKeySourceOptions) {
    this.url = options.url;
    this.refreshIntervalMs = options.refreshIntervalMs ?? 10 * 60_000;
    this.minRefetchIntervalMs = options.minRefetchIntervalMs ?? 10_000;
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.onError = options.onError ?? (() => {});
    this.now = options.now ?? Date.now;
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

  /** For an unknown kid: fetches unless a fetch ran recently; resolves whether the keys changed. */
  async refresh(): Promise<boolean> {
    if (this.inFlight) return this.inFlight.catch(() => false);
    if (this.now() - this.lastAttempt < this.minRefetchIntervalMs) return false;
    return this.fetchNow().catch(() => false);
  }

  /** One fetch at a time; concurrent callers share it. Rejects (after telling onError) on failure. */
  private fetchNow(): Promise<boolean> {
    if (this.inFlight) return this.inFlight;
    this.lastAttempt = this.now();
    this.inFlight = this.load()
      .catch((err: Error) => {
        this.onError(err);
        throw err;
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }

  private async load(): Promise<boolean> {
    const keys = await this.download();
    const fingerprint = JSON.stringify(keys);
    if (fingerprint === this.fingerprint) return false;
    const imported = this.importKeys(keys);
    if (imported.length === 0) throw new JwksError(`JWKS at ${this.url} has no usable signing key`);
    this.byKid = new Map(imported.flatMap((k) => (k.kid === undefined ? [] : [[k.kid, k] as const])));
    this.all = imported;
    this.fingerprint = fingerprint;
    this.generationCount++;
    return true;
  }

  private async download(): Promise<JsonWebKey[]> {
    let response: Response;
    try {
      response = await fetch(this.url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new JwksError(`cannot fetch JWKS from ${this.url}: ${(err as Error).message}`);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new JwksError(`cannot fetch JWKS from ${this.url}: HTTP ${response.status}`);
    }
    // An https URL that redirects to http would undo what JWT_JWKS_URL's check stands for.
    if (this.url.startsWith('https:') && !response.url.startsWith('https:')) {
      await response.body?.cancel();
      throw new JwksError(`JWKS from ${this.url} redirected to plain http; refused`);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch (err) {
      throw new JwksError(`JWKS from ${this.url} is not JSON: ${(err as Error).message}`);
    }
    const keys = (body as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys)) throw new JwksError(`JWKS from ${this.url} has no "keys" array`);
    return keys as JsonWebKey[];
  }

  /** Skips keys we cannot use (encryption keys, EC keys …) rather than failing the whole set. */
  private importKeys(keys: JsonWebKey[]): VerificationKey[] {
    const imported: VerificationKey[] = [];
    for (const jwk of keys) {
      try {
        imported.push(keyFromJwk(jwk));
      } catch (err) {
        this.onError(
          new JwksError(`JWKS key ${JSON.stringify(jwk?.kid ?? null)} skipped: ${(err as Error).message}`),
        );
      }
    }
    return imported;
  }
}
