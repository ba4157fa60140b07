import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { keyedHmac } from '../src/keyed-hmac.ts';

describe('keyed HMAC', () => {
  it("gives node:crypto's HMAC of every input, call after call, for each hash", () => {
    for (const hash of ['sha256', 'sha384', 'sha512'] as const) {
      for (const key of [randomBytes(16), randomBytes(64), randomBytes(200)]) {
        const macOf = keyedHmac(hash, key);
        for (const length of [0, 1, 55, 64, 65, 1000]) {
          const data = randomBytes(length);
          assert.deepEqual(
            Buffer.from(macOf(data)),
            createHmac(hash, key).update(data).digest(),
            `${hash} ${length}`,
          );
        }
      }
    }
  });
});
