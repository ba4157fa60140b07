import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RateMeter } from '../../src/metrics/rate-meter.ts';

describe('rate meter', () => {
  it('averages the last minute of complete seconds and forgets older ones', () => {
    let now = 1_000_000;
    const meter = new RateMeter(() => now);
    meter.add(590);
    now += 1000;
    assert.equal(meter.perSecond(), 10, 'the finished second, over 59');
    meter.add(1000);
    assert.equal(meter.perSecond(), 10, 'the current second does not count yet');
    now += 59_000;
    assert.equal(meter.perSecond(), 1000 / 59, 'the first second has left the window');
    now += 3_600_000;
    assert.equal(meter.perSecond(), 0);
  });
});
