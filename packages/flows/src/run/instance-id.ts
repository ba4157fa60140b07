/**
 * Flow instance ids as Mercury makes them (a random version-4 UUID without its dashes, 32 hex
 * digits), drawn from a pool of random bytes filled 256 ids at a time: `randomUUID()` followed by
 * removing the dashes cost a flow about as much as one of its tasks.
 */
import { randomFillSync } from 'node:crypto';

const ID_BYTES = 16;
const pool = Buffer.alloc(ID_BYTES * 256);
let next = pool.length;

export function newInstanceId(): string {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  const at = next;
  next += ID_BYTES;
  pool[at + 6] = (pool[at + 6]! & 0x0f) | 0x40; // version 4
  pool[at + 8] = (pool[at + 8]! & 0x3f) | 0x80; // RFC 4122 variant
  return pool.toString('hex', at, at + ID_BYTES);
}
