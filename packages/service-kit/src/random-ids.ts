/**
 * Random ids drawn from a pool of CSPRNG bytes filled 256 ids at a time: ids are made per flow or
 * per connection (thousands a second in a reconnect storm), and one `randomBytes` or
 * `randomUUID()` call per id cost more than everything else about making it. Each slice is used
 * once, as crypto.randomUUID() does with its own pool.
 */
import { randomFillSync } from 'node:crypto';

/**
 * A maker of ids of `bytes` random bytes in `encoding`; `shape` may set fixed bits of each slice
 * (e.g. a UUID's version) before it is encoded.
 */
export function randomIds(
  bytes: number,
  encoding: 'hex' | 'base64url',
  shape?: (pool: Buffer, at: number) => void,
): () => string {
  const { pool, slice } = randomSlices(bytes);
  return () => {
    const at = slice();
    shape?.(pool, at);
    return pool.toString(encoding, at, at + bytes);
  };
}

/** A pool of 256 slices of `bytes` CSPRNG bytes, and the offset of the next unused one (refilled when all are used). */
function randomSlices(bytes: number): { pool: Buffer; slice: () => number } {
  const pool = Buffer.alloc(bytes * 256);
  let next = pool.length;
  const slice = () => {
    if (next === pool.length) {
      randomFillSync(pool);
      next = 0;
    }
    const at = next;
    next += bytes;
    return at;
  };
  return { pool, slice };
}

/**
 * Random version-4 UUIDs as text, as `crypto.randomUUID()` writes them, from a pool as above. Each
 * is written as ASCII into a scratch buffer and read out as one string: `randomUUID()` joins 20
 * pieces into its text, about 600 bytes of garbage per id (the hub makes two per connect).
 */
export function randomUuids(): () => string {
  const { pool, slice } = randomSlices(16);
  const text = Buffer.alloc(36);
  return () => {
    const at = slice();
    pool[at + 6] = (pool[at + 6]! & 0x0f) | 0x40; // version 4
    pool[at + 8] = (pool[at + 8]! & 0x3f) | 0x80; // RFC 4122 variant
    let to = 0;
    for (let i = 0; i < 16; i++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) text[to++] = 0x2d; // '-'
      const byte = pool[at + i]!;
      text[to++] = hexDigits[byte >> 4]!;
      text[to++] = hexDigits[byte & 0x0f]!;
    }
    return text.toString('latin1', 0, 36);
  };
}

const hexDigits = Buffer.from('0123456789abcdef', 'latin1');
