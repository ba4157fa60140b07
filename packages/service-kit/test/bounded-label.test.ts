import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { boundedLabel, otherLabelValue } from '../src/bounded-label.ts';

describe('boundedLabel', () => {
  it('keeps the first values as they are and folds later ones into "other"', () => {
    const label = boundedLabel(2);
    assert.equal(label('a'), 'a');
    assert.equal(label('b'), 'b');
    assert.equal(label('c'), otherLabelValue);
    assert.equal(label('a'), 'a', 'a value seen before the limit stays itself');
    assert.equal(label('d'), otherLabelValue);
  });

  it('never holds more than its limit of distinct values', () => {
    const label = boundedLabel(10);
    const values = new Set(Array.from({ length: 1000 }, (_, i) => label(`type-${i}`)));
    assert.equal(values.size, 11);
  });
});
