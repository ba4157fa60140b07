/**
 * Which keys were seen lately, approximately, in fixed memory: a table of 32-bit fingerprints
 * indexed by the key's hash (the "doorkeeper" of TinyLFU). A full cache admits a key only on its
 * second sighting, so a stream of keys that never come back (a token per request) costs no
 * insert, no eviction and no garbage, and cannot push out the keys that do come back.
 * A collision only makes a key look seen (admitted one sighting early) or unseen (one late): the
 * answer is never wrong, only less exact, so a plain hash of the key's end is enough.
 */
export class Doorkeeper {
  private readonly table: Int32Array;
  private readonly mask: number;

  /** `slots`: about twice the cache's capacity; rounded up to a power of two, at least 1,024. */
  constructor(slots: number) {
    let size = 1024;
    while (size < slots) size *= 2;
    this.table = new Int32Array(size);
    this.mask = size - 1;
  }

  /** Whether `key` was seen since another key took its slot; remembers it either way. */
  sawBefore(key: string): boolean {
    const hash = tailHash(key);
    const slot = hash & this.mask;
    const fingerprint = hash | 1; // never 0, the empty slot
    if (this.table[slot] === fingerprint) return true;
    this.table[slot] = fingerprint;
    return false;
  }
}

/**
 * FNV-1a over the last 64 characters (a token's signature, where tokens differ most, read at a
 * fixed cost whatever the token's length), then murmur3's finalizer, so that the low bits that pick
 * the slot depend on every character.
 */
function tailHash(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = Math.max(0, key.length - 64); i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  return hash ^ (hash >>> 16);
}
