/**
 * Which types the fan-out subscription reads, and since where (fanout-interest.ts), against a
 * subscription that records what it is asked and answers the position it has delivered up to.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Subscription } from '@gatehouse/bus';
import { waitFor } from '@gatehouse/testkit';
import { FanoutInterest } from '../../src/delivery/index.ts';

function recordingSubscription() {
  const asked: Array<string[] | 'everything'> = [];
  const sub = {
    delivered: 10,
    route(routes: ReadonlySet<string> | undefined) {
      asked.push(routes === undefined ? 'everything' : [...routes].sort());
      return String(sub.delivered);
    },
    close: async () => {},
  };
  return { sub: sub as Subscription & typeof sub, asked };
}

const interest = (maxTypes = 3, lingerMs = 0) =>
  new FanoutInterest({ compare: (a, b) => Number(a) - Number(b), maxTypes, lingerMs });

describe('fan-out interest', () => {
  it('reads a type from its first subscriber on, covered from the position delivered then', () => {
    const { sub, asked } = recordingSubscription();
    const i = interest();
    i.attach(sub);
    i.up('a');
    i.up('a');
    sub.delivered = 20;
    i.up('b');
    assert.deepEqual(asked, [['a'], ['a', 'b']], 'a second subscriber of a changes nothing');
    assert.equal(i.covers(['a'], '10'), true);
    assert.equal(i.covers(['a'], '9'), false);
    assert.equal(i.covers(['a', 'b'], '15'), false, 'b only since 20');
    assert.equal(i.covers(['a', 'b'], '20'), true);
    assert.equal(i.covers(['c'], '99'), false);
    i.close();
  });

  it('types wanted before the subscription exists are read once it is attached', () => {
    const { sub, asked } = recordingSubscription();
    const i = interest();
    i.up('a');
    assert.equal(i.covers(['a'], '50'), false);
    i.attach(sub);
    assert.deepEqual(asked, [['a']]);
    assert.equal(i.covers(['a'], '10'), true);
    i.close();
  });

  it('drops a type after the linger once its last subscriber left, keeping one wanted again meanwhile', async () => {
    const { sub, asked } = recordingSubscription();
    const i = interest(3, 20);
    i.attach(sub);
    i.up('a');
    i.up('b');
    i.down('a');
    i.down('b');
    i.up('b');
    await waitFor(() => asked.length === 3, { what: 'the sweep' });
    assert.deepEqual(asked.at(-1), ['b']);
    assert.equal(i.reading, 1);
    assert.equal(i.covers(['a'], '99'), false);
    assert.equal(i.covers(['b'], '10'), true, 'b was read all along');
    i.close();
  });

  it('reads everything beyond maxTypes, covering every type from then, and filters again below it', async () => {
    const { sub, asked } = recordingSubscription();
    const i = interest(2, 0);
    i.attach(sub);
    i.up('a');
    i.up('b');
    sub.delivered = 30;
    i.up('c');
    assert.deepEqual(asked.at(-1), 'everything');
    assert.equal(i.reading, -1);
    assert.equal(i.covers(['zzz'], '30'), true);
    assert.equal(i.covers(['zzz'], '29'), false);
    assert.equal(i.covers(['a'], '10'), true);
    i.up('d');
    assert.equal(asked.length, 3, 'no reopen for a new type while reading everything');
    i.down('c');
    i.down('d');
    await waitFor(() => asked.length === 4, { what: 'the sweep' });
    assert.deepEqual(asked.at(-1), ['a', 'b']);
    assert.equal(i.covers(['a'], '10'), true);
    assert.equal(i.covers(['c'], '99'), false);
    i.close();
  });
});
