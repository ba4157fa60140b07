import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  assertJsonDepth,
  commonConfig,
  ConfigError,
  exceedsJsonDepth,
  HttpError,
  JsonTooDeepError,
  loadConfig,
} from '../src/index.ts';

const nested = (depth: number) => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`) as unknown;

describe('JSON nesting depth', () => {
  it('counts objects and arrays, not scalars', () => {
    assert.equal(exceedsJsonDepth('text', 0), false);
    assert.equal(exceedsJsonDepth(null, 0), false);
    assert.equal(exceedsJsonDepth({}, 0), true);
    assert.equal(exceedsJsonDepth({}, 1), false);
    assert.equal(exceedsJsonDepth({ a: [1, { b: 'x' }] }, 3), false);
    assert.equal(exceedsJsonDepth({ a: [1, { b: 'x' }] }, 2), true);
    assert.equal(exceedsJsonDepth([{}, [[{}]]], 3), true, 'the deepest branch counts');
  });

  it('takes byte arrays as leaves', () => {
    assert.equal(exceedsJsonDepth({ data: Buffer.alloc(1024 * 1024) }, 1), false);
  });

  it('walks any depth without recursion', () => {
    assert.equal(exceedsJsonDepth(nested(1_000_000), 128), true);
    assert.equal(exceedsJsonDepth(nested(128), 128), false);
  });

  it('refuses with a 400 naming the limit', () => {
    assert.doesNotThrow(() => assertJsonDepth(nested(8), 8));
    assert.throws(
      () => assertJsonDepth(nested(9), 8, 'the event'),
      (err: unknown) =>
        err instanceof JsonTooDeepError &&
        err instanceof HttpError &&
        err.status === 400 &&
        err.message === 'the event nests objects and arrays deeper than MAX_JSON_DEPTH (8) levels',
    );
  });

  it('is MAX_JSON_DEPTH, 128 by default, between 8 and 1000', () => {
    assert.equal(loadConfig(commonConfig, {}).MAX_JSON_DEPTH, 128);
    assert.equal(loadConfig(commonConfig, { MAX_JSON_DEPTH: '64' }).MAX_JSON_DEPTH, 64);
    for (const bad of ['7', '1001', 'deep'])
      assert.throws(() => loadConfig(commonConfig, { MAX_JSON_DEPTH: bad }), ConfigError);
  });
});
