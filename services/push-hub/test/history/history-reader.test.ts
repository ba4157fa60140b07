/**
 * A history page's byte bound (HISTORY_MAX_BYTES) counts the bytes the page is written in, UTF-8,
 * not the characters of its events: an event of three-byte characters takes three times its length.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventRing, type RingEvent } from '../../src/delivery/index.ts';
import { readHistory } from '../../src/history/index.ts';

function event(position: number, text: string): RingEvent {
  const e = { specversion: '1.0', id: `e-${position}`, source: 't', type: 'news', data: { text } };
  return { position: String(position), type: 'news', event: e, json: JSON.stringify(e) };
}

describe('history page', () => {
  it('holds at most HISTORY_MAX_BYTES of UTF-8, the newest event whatever its size', async () => {
    const ring = new EventRing(10);
    // Each about 1,100 characters and 3,100 bytes: all three fit in 4,096 characters, one in 4,096 bytes.
    for (let p = 1; p <= 3; p++) ring.push(event(p, '€'.repeat(1000)));
    const page = await readHistory(
      {
        ring,
        compare: (a, b) => Number(a) - Number(b),
        covers: () => true,
        wholeStream: () => true,
        epochChanged: () => false,
        tail: undefined,
      },
      { types: ['news'], wanted: () => true, limit: 10, before: undefined, maxBytes: 4096 },
    );
    assert.deepEqual(
      page.events.map((e) => e.position),
      ['3'],
    );
  });
});
