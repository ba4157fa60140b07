import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decisionIndex, decisionText, parseRetry } from '../src/run/decision.ts';
import { responseOf } from '../src/run/flow-result.ts';

describe('decision', () => {
  it('takes true → first, false → second (Mercury)', () => {
    assert.equal(decisionIndex(true, 2), 0);
    assert.equal(decisionIndex(false, 2), 1);
  });

  it('reads other values as a 1-based integer, at least 1, decimals truncated', () => {
    assert.equal(decisionIndex(3, 3), 2);
    assert.equal(decisionIndex('2.9', 3), 1);
    assert.equal(decisionIndex(0, 3), 0);
    assert.equal(decisionIndex(-5, 3), 0);
    assert.equal(decisionIndex('abc', 3), 0);
    assert.equal(decisionIndex('false', 3), 0, 'the string "false" is not Boolean false');
  });

  it('refuses no value and an index past the list', () => {
    assert.equal(decisionIndex(undefined, 2), undefined);
    assert.equal(decisionIndex(null, 2), undefined);
    assert.equal(decisionIndex(100, 2), undefined);
    assert.equal(decisionText(null), 'null');
    assert.equal(decisionText(100), '100');
  });

  it('splits @retry entries', () => {
    assert.deepEqual(parseRetry('@retry'), { retry: true, otherwise: undefined });
    assert.deepEqual(parseRetry('@retry | my.task'), { retry: true, otherwise: 'my.task' });
    assert.deepEqual(parseRetry('my.task'), { retry: false, otherwise: 'my.task' });
  });
});

describe('responseOf', () => {
  it('takes status, headers (lower-cased text) and body from output.*', () => {
    const warnings: string[] = [];
    assert.deepEqual(
      responseOf({ status: '201', header: { 'X-A': 1, skip: null }, body: { a: 1 } }, (m) =>
        warnings.push(m),
      ),
      { kind: 'response', status: 201, headers: { 'x-a': '1' }, body: { a: 1 } },
    );
    assert.equal(responseOf({ status: 0 }, (m) => warnings.push(m)).status, 200);
    assert.equal(warnings.length, 1);
  });
});
