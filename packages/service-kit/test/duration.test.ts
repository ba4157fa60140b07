import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkDuration,
  ConfigError,
  duration,
  formatDuration,
  loadConfig,
  parseDuration,
} from '../src/index.ts';

describe('parseDuration', () => {
  it('reads a number with a unit, and a bare number as milliseconds', () => {
    assert.equal(parseDuration('30s'), 30_000);
    assert.equal(parseDuration('1.5s'), 1500);
    assert.equal(parseDuration(' 100ms '), 100);
    assert.equal(parseDuration('2m'), 120_000);
    assert.equal(parseDuration('1h'), 3_600_000);
    assert.equal(parseDuration('1d'), 86_400_000);
    assert.equal(parseDuration('5000'), 5000, 'RIG: PROXY_RECV_TIMEOUT=5000 is 5 s');
    assert.equal(parseDuration(20), 20, 'a YAML number is milliseconds too');
    assert.equal(parseDuration('0'), 0);
  });

  it('refuses what is not a duration', () => {
    for (const bad of ['10x', '-1s', '', 's', '1 2s', '0x10'])
      assert.throws(() => parseDuration(bad), /must be a duration/);
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY])
      assert.throws(() => parseDuration(bad), /0 or more/);
  });

  it('formats the shortest exact form', () => {
    assert.deepEqual([250, 1000, 1500, 15_000, 120_000, 90_000, 3_600_000, 86_400_000].map(formatDuration), [
      '250ms',
      '1s',
      '1.5s',
      '15s',
      '2m',
      '90s',
      '1h',
      '1d',
    ]);
  });
});

describe('duration bounds', () => {
  it('refuses below the minimum and above the maximum, and 0 only as "off" when allowed', () => {
    assert.equal(checkDuration(100, { min: '100ms' }), 100);
    assert.throws(() => checkDuration(99, { min: '100ms' }), /must be at least 100ms, got 99ms/);
    assert.throws(() => checkDuration(0, { min: '100ms' }), /at least 100ms/);
    assert.equal(checkDuration(0, { min: '1s', off: true }), 0);
    assert.throws(() => checkDuration(500, { min: '1s', off: true }), /must be at least 1s, or 0 for off/);
    assert.throws(
      () => checkDuration(601_000, { min: '100ms', max: '10m' }),
      /must be 100ms to 10m, got 601s/,
    );
  });

  it('stop start-up naming the variable: HEARTBEAT_INTERVAL=0 is refused', () => {
    const spec = {
      HEARTBEAT_INTERVAL: duration('heartbeat', '15s', { min: '100ms' }),
      SYNC: duration('sync', '30s', { min: '1s', off: true }),
    };
    assert.deepEqual(loadConfig(spec, {}), { HEARTBEAT_INTERVAL: 15_000, SYNC: 30_000 });
    assert.deepEqual(loadConfig(spec, { HEARTBEAT_INTERVAL: '250', SYNC: '0' }), {
      HEARTBEAT_INTERVAL: 250,
      SYNC: 0,
    });
    assert.throws(
      () => loadConfig(spec, { HEARTBEAT_INTERVAL: '0', SYNC: '1ms' }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.problems[0]!, /^HEARTBEAT_INTERVAL: must be at least 100ms, got 0ms .*\(got "0"\)$/);
        assert.match(err.problems[1]!, /^SYNC: must be at least 1s, or 0 for off/);
        return true;
      },
    );
  });
});
