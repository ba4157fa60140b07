/**
 * A traced request whose query carries credentials leaves none of them in the engine's trace
 * records (log lines) or spans: the values of LOG_REDACT_PARAMS names are [REDACTED], the other
 * parameters stay as they came.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type RunningEngine, startEngine } from './engine-fixture.ts';

const secrets = ['s3cret-access', 'hunter2-password', 'k3y-of-api', 'ey-jwt-value'];

describe('secret query parameters in trace records', () => {
  let run: RunningEngine;
  before(async () => {
    run = await startEngine();
  });
  after(() => run.stop());

  it('redacts access_token, password, api_key and jwt from the trace records and spans of a request', async () => {
    const query = `access_token=${secrets[0]}&Password=${secrets[1]}&api_key=${secrets[2]}&jwt=${secrets[3]}&page=2`;
    const res = await fetch(`${run.base}/api/secure/hello?${query}`, {
      headers: { authorization: 'Bearer demo' },
    });
    assert.equal(res.status, 200, await res.text());
    const traced = run.logs.filter((l) => l['msg'] === 'trace');
    assert.ok(traced.length > 0, 'the endpoint is traced');
    const recorded =
      JSON.stringify(run.logs) + JSON.stringify(run.spans.getFinishedSpans().map((s) => s.attributes));
    for (const secret of secrets) assert.ok(!recorded.includes(secret), `${secret} was recorded`);
    const path = String((traced[0]!['trace'] as { path: string }).path);
    assert.match(path, /access_token=\[REDACTED\]/);
    assert.match(path, /page=2/, 'other parameters stay');
  });
});
