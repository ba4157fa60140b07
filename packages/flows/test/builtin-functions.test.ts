import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isEventEnvelope } from '@gatehouse/functions';
import { flowBuiltinFunctions } from '../src/run/builtin-functions.ts';

const fn = (route: string) => {
  const found = flowBuiltinFunctions().find((f) => f.route === route);
  assert.ok(found, route);
  return (body: unknown, headers: Record<string, string> = {}) =>
    found.handleEvent(headers, body as never, 1) as unknown;
};

describe('no.op', () => {
  it('answers its input body and its headers, without the engine headers', () => {
    const reply = fn('no.op')({ a: 1 }, { 'x-a': 'b', my_route: 'no.op' });
    assert.ok(isEventEnvelope(reply));
    assert.deepEqual(reply.getBody(), { a: 1 });
    assert.deepEqual(reply.getHeaders(), { 'x-a': 'b' });
  });
});

describe('simple.exception.handler', () => {
  it('answers the standard error map from status and message', () => {
    assert.deepEqual(fn('simple.exception.handler')({ status: '404', message: 'gone' }), {
      type: 'error',
      status: 404,
      message: 'gone',
    });
  });
});

describe('resilience.handler', () => {
  const resilience = fn('resilience.handler');

  it('lets the task run (decision 1) when nothing failed', async () => {
    assert.deepEqual(await resilience({}), { decision: 1, cumulative: 0 });
  });

  it('retries at once the first time, after the delay later, and aborts past max_attempts', async () => {
    assert.deepEqual(await resilience({ status: 503, max_attempts: 2 }), {
      decision: 1,
      attempt: 1,
      cumulative: 0,
    });
    const started = performance.now();
    assert.deepEqual(await resilience({ status: 503, max_attempts: 2, attempt: 1, delay: 60 }), {
      decision: 1,
      attempt: 2,
      cumulative: 0,
    });
    assert.ok(performance.now() - started >= 55, 'second retry waits for the delay');
    assert.deepEqual(await resilience({ status: 503, max_attempts: 2, attempt: 2, message: 'down' }), {
      decision: 2,
      attempt: 3,
      cumulative: 0,
      status: 503,
      message: 'down',
    });
  });

  it('takes the alternative path (decision 3) for the listed statuses and ranges', async () => {
    assert.equal(
      (
        (await resilience({ status: 404, max_attempts: 3, alternative: '401, 403-404' })) as {
          decision: number;
        }
      ).decision,
      3,
    );
    assert.equal(
      (
        (await resilience({ status: 500, max_attempts: 3, alternative: '401, 403-404' })) as {
          decision: number;
        }
      ).decision,
      1,
    );
  });

  it('starts a backoff after backoff_trigger failures and refuses with 503 during it', async () => {
    const tripped = (await resilience({
      status: 500,
      cumulative: 2,
      backoff_trigger: 2,
      backoff_seconds: 5,
    })) as Record<string, unknown>;
    assert.equal(tripped['decision'], 2);
    assert.equal(tripped['status'], 503);
    assert.equal(tripped['message'], 'Service temporarily not available - please try again in 5 seconds');
    const during = (await resilience({ backoff: tripped['backoff'] })) as Record<string, unknown>;
    assert.equal(during['decision'], 2);
    assert.match(String(during['message']), /please try again in [45] seconds/);
    assert.deepEqual(await resilience({ backoff: Date.now() - 1, cumulative: 7 }), {
      decision: 1,
      cumulative: 0,
    });
  });
});
