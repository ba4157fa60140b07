/**
 * Flow instance ids as Mercury makes them (a random version-4 UUID without its dashes, 32 hex
 * digits), from a pool of random bytes: `randomUUID()` followed by removing the dashes cost a flow
 * about as much as one of its tasks.
 */
import { randomIds } from '@gatehouse/service-kit';

export const newInstanceId: () => string = randomIds(16, 'hex', (pool, at) => {
  pool[at + 6] = (pool[at + 6]! & 0x0f) | 0x40; // version 4
  pool[at + 8] = (pool[at + 8]! & 0x3f) | 0x80; // RFC 4122 variant
});
