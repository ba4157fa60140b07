/** The example app's cookies function writes the client's cookie into HTML escaped, never as markup. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type RunningEngine, startEngine } from './engine-fixture.ts';

describe('example cookies function', () => {
  let run: RunningEngine;
  before(async () => {
    run = await startEngine({ LOG_LEVEL: 'silent' });
  });
  after(() => run.stop());

  it('escapes a cookie holding markup', async () => {
    const res = await fetch(`${run.base}/api/cookies`, {
      headers: { cookie: 'name=<script>alert(1)</script>' },
    });
    const body = await res.text();
    assert.equal(res.status, 201);
    assert.doesNotMatch(body, /<script/);
    assert.match(body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  });
});
