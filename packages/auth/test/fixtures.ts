/** Keys, clocks and token helpers shared by the auth tests. */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';

export interface RsaPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
  publicPem: string;
}

export function rsaPair(bits = 2048): RsaPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  return { privateKey, publicKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

/** A clock the test moves by hand (ms). */
export class FakeClock {
  time: number;
  constructor(start = Date.UTC(2025, 0, 1)) {
    this.time = start;
  }
  readonly now = (): number => this.time;
  advance(ms: number): void {
    this.time += ms;
  }
  /** Seconds since the epoch, as in `exp` claims. */
  seconds(offsetSeconds = 0): number {
    return Math.floor(this.time / 1000) + offsetSeconds;
  }
}

export const hsSecret = 'a-test-secret-that-is-long-enough-for-hs256';

/** Replaces one character of `text` at `index` with a different base64url character. */
export function alterAt(text: string, index: number): string {
  const replacement = text[index] === 'A' ? 'B' : 'A';
  return text.slice(0, index) + replacement + text.slice(index + 1);
}
