import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidCloudEventError, problem, UnsupportedCloudEventError } from '../src/index.ts';

describe('errors', () => {
  it('InvalidCloudEventError carries its problems and lists them in the message', () => {
    const problems = [
      problem('id', 'required', `'id' is required`),
      problem('time', 'format', `'time' is bad`),
    ];
    const err = new InvalidCloudEventError(problems);
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'InvalidCloudEventError');
    assert.deepEqual(err.problems, problems);
    assert.equal(err.message, `invalid CloudEvent: 'id' is required; 'time' is bad`);
  });

  it('UnsupportedCloudEventError carries its reason', () => {
    const err = new UnsupportedCloudEventError('batch-mode', 'no batches');
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'UnsupportedCloudEventError');
    assert.equal(err.reason, 'batch-mode');
    assert.equal(err.message, 'no batches');
  });
});
