/**
 * Where the verifier finds the keys for a token: a static key from config, or a JWKS that changes
 * over time. Several sources can be combined (a shared HS secret next to an identity provider's
 * JWKS).
 */
import type { VerificationKey } from './verification-key.ts';

export interface KeySource {
  /** Keys that may have signed a token with this `kid` (all keys when the token names none). */
  candidates(kid: string | undefined): readonly VerificationKey[];
  /**
   * Asks the source to look for new keys after a token named an unknown `kid`; resolves whether the
   * key set changed. Sources with fixed keys leave it out.
   */
  refresh?(): Promise<boolean>;
  /** Changes whenever the key set changes, so the verifier drops tokens verified with removed keys. */
  readonly generation: number;
}

/** One key from config. Like RIG, it ignores `kid`: the one key is the only candidate. */
export class StaticKeySource implements KeySource {
  readonly generation = 0;
  private readonly keys: readonly VerificationKey[];

  constructor(key: VerificationKey) {
    this.keys = [key];
  }

  candidates(): readonly VerificationKey[] {
    return this.keys;
  }
}
