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
  const pool = Buffer.alloc(bytes * 256);
  let next = pool.length;
  return () => {
    if (next === pool.length) {
      randomFillSync(pool);
      next = 0;
    }
    const at = next;
    next += bytes;
    shape?.(pool, at);
    return pool.toString(encoding, at, at + bytes);
  };
}
