/**
 * Event Script flows over HTTP: the example app's flows (examples/rest-app/flows.yaml) driven
 * through the REST engine's `http.flow.adapter` endpoints.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type RunningEngine, startEngine } from './engine-fixture.ts';

let engine: RunningEngine;
let base: string;

before(async () => {
  engine = await startEngine();
  base = engine.base;
});
after(() => engine.stop());

const json = async (res: Response) => (await res.json()) as Record<string, unknown>;
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });

describe('flow adapter', () => {
  it("runs a flow shaped like Mercury's greetings test flow, cid → model.cid", async () => {
    const res = await fetch(`${base}/api/flow/greetings/Peter`, {
      headers: { 'x-correlation-id': 'cid-42' },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-correlation-id'), 'cid-42');
    const body = await json(res);
    assert.equal(body['user'], 'Peter');
    assert.equal(body['greeting'], 'hello world');
    assert.equal(body['cid'], 'cid-42');
    assert.equal(body['correlation'], 'cid-42', 'functions get my_correlation_id');
  });

  it('runs the flow-level handler of greetings when its task fails', async () => {
    const res = await fetch(`${base}/api/flow/greetings/Peter?ex=403`);
    assert.equal(res.status, 403);
    assert.deepEqual(await json(res), { type: 'error', status: 403, message: 'Simulated exception' });
  });

  it('answers 500 Flow <id> not found for an unknown flow', async () => {
    const res = await fetch(`${base}/api/flow/missing`);
    assert.equal(res.status, 500);
    assert.equal((await json(res))['message'], 'Flow no-such-flow not found');
  });

  it('logs at start the flow endpoints whose flow did not load', () => {
    assert.ok(engine.logs.some((l) => String(l['msg']).includes('flow no-such-flow is not loaded')));
  });
});

describe('execution types', () => {
  it('decision: boolean true → first, false → second', async () => {
    assert.deepEqual(await json(await fetch(`${base}/api/flow/decision/boolean?flag=true`)), {
      answer: 'yes',
    });
    assert.deepEqual(await json(await fetch(`${base}/api/flow/decision/boolean?flag=no`)), { answer: 'no' });
  });

  it('decision: numeric, 1-based; out of range → 500 invalid decision', async () => {
    assert.deepEqual(await json(await fetch(`${base}/api/flow/decision/numeric?n=3`)), { picked: 3 });
    assert.deepEqual(await json(await fetch(`${base}/api/flow/decision/numeric?n=1`)), { picked: 1 });
    const res = await fetch(`${base}/api/flow/decision/numeric?n=100`);
    assert.equal(res.status, 500);
    assert.equal((await json(res))['message'], 'Task pick returned invalid decision (100)');
  });

  it('parallel: the branch that reaches end answers', async () => {
    assert.deepEqual(await json(await fetch(`${base}/api/flow/parallel?id=p1`)), { id: 'p1', by: 'quick' });
  });

  it('fork + join: 100 requests at once, each answered with its own data', async () => {
    const answers = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const res = await post('/api/flow/fork-join', { id: `r${i}`, a: i, b: 1000, ms: i % 7 });
        assert.equal(res.status, 200);
        return json(res);
      }),
    );
    for (const [i, body] of answers.entries()) {
      assert.deepEqual(body, { id: `r${i}`, sum: i + 1000, echoed: `r${i}` });
    }
  });

  it('dynamic fork: one branch per list element, join after all', async () => {
    const body = await json(await post('/api/flow/dynamic-fork', { items: [1, 2, 3, 4] }));
    assert.deepEqual(
      (body['squares'] as number[]).toSorted((a, b) => a - b),
      [1, 4, 9, 16],
    );
  });

  it('pipeline: for loop over two steps, break condition', async () => {
    assert.deepEqual(await json(await fetch(`${base}/api/flow/pipeline/for?stop=-1`)), {
      trail: [0, 1, 2, 3],
      n: 4,
    });
    assert.deepEqual(await json(await fetch(`${base}/api/flow/pipeline/for?stop=2`)), {
      trail: [0, 1, 2],
      n: 2,
    });
  });

  it('pipeline: while loop', async () => {
    assert.deepEqual(await json(await fetch(`${base}/api/flow/pipeline/while?limit=5`)), { count: 5 });
  });

  it('response: answers at once, the flow goes on', async () => {
    const started = performance.now();
    const res = await post('/api/flow/respond-early', { order: 7 });
    assert.equal(res.status, 202);
    assert.deepEqual(await json(res), { order: 7 });
    // The slow task takes 5 s (respond-early.yml), far above an answer's time, so an answer
    // that waited for it is told apart on a loaded machine.
    assert.ok(performance.now() - started < 2500, 'answered before the slow task');
  });

  it('delay: fixed and from the model', async () => {
    const started = performance.now();
    const res = await fetch(`${base}/api/flow/delayed?ms=150`);
    assert.deepEqual(await json(res), { waited: '150' });
    assert.ok(performance.now() - started >= 340, 'both delays passed');
  });
});

describe('sub-flows', () => {
  it('runs the child: its status, headers and body come back; it writes the parent model', async () => {
    const res = await post('/api/flow/parent', { name: 'kid' }, { 'x-correlation-id': 'family' });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('x-child'), 'from-parent');
    const body = await json(res);
    assert.equal((body['child'] as Record<string, unknown>)['user'], 'kid');
    assert.equal((body['child'] as Record<string, unknown>)['correlation'], 'family', 'child shares the cid');
    assert.equal(body['visited'], true);
    assert.equal(body['cid'], 'family');
  });

  it('a failing child is a failure of the parent task, caught by its handler', async () => {
    const res = await post('/api/flow/parent?fail=409', { name: 'kid', fail: 409 });
    assert.equal(res.status, 409);
    assert.deepEqual(await json(res), { type: 'error', status: 409, message: 'Simulated exception' });
  });
});

describe('exceptions', () => {
  it('a task-level handler answers for its task', async () => {
    const res = await fetch(`${base}/api/flow/exceptions?first=418`);
    assert.equal(res.status, 422);
    assert.deepEqual(await json(res), { by: 'task handler', task: 'first.step', code: 418 });
  });

  it('the flow-level handler answers for tasks without their own', async () => {
    const res = await fetch(`${base}/api/flow/exceptions?second=451`);
    assert.equal(res.status, 451);
    assert.deepEqual(await json(res), { type: 'error', status: 451, message: 'Simulated exception' });
  });

  it('no failure: the flow ends normally', async () => {
    assert.deepEqual(await json(await fetch(`${base}/api/flow/exceptions`)), { result: 'ok' });
  });

  it('resilience.handler retries with @retry until the task succeeds', async () => {
    assert.deepEqual(await json(await fetch(`${base}/api/flow/retry?succeed_at=2`)), { attempt: 2 });
  });

  it('resilience.handler gives up after max_attempts', async () => {
    const res = await fetch(`${base}/api/flow/retry?succeed_at=9`);
    assert.equal(res.status, 503);
    assert.deepEqual(await json(res), { type: 'error', status: 503, message: 'Attempt 3 failed' });
  });
});

describe('deadlines', () => {
  it('the endpoint timeout is the deadline: 408 Flow timeout for 1000 ms', async () => {
    const started = performance.now();
    // A task of 10 s, far above the 1 s deadline: an answer that waited for it (or for the flow's
    // 5 s ttl) is told apart on a loaded machine.
    const res = await fetch(`${base}/api/flow/slow?ms=10000`);
    assert.equal(res.status, 408);
    assert.equal((await json(res))['message'], 'Flow timeout for 1000 ms');
    assert.ok(performance.now() - started < 4000, `answered after ${performance.now() - started} ms`);
  });

  it('without an endpoint timeout, the flow ttl is the deadline', async () => {
    const res = await fetch(`${base}/api/flow/slow-ttl?ms=50`);
    assert.deepEqual(await json(res), { slept: 50, id: null });
  });
});

describe('tracing', () => {
  it('records the flow and each task with the flow id and task name', async () => {
    const res = await post(
      '/api/flow/fork-join',
      { id: 'traced', a: 1, b: 2, ms: 0 },
      { 'x-trace-id': 'flowtrace1' },
    );
    assert.equal(res.status, 200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const records = engine.logs
      .map((l) => l['trace'] as Record<string, unknown> | undefined)
      .filter((t) => t?.['id'] === 'flowtrace1') as Array<Record<string, unknown>>;
    const summary = records.find((t) => t['service'] === 'task.executor');
    assert.ok(summary, 'flow summary record');
    const annotations = summary['annotations'] as Record<string, unknown>;
    assert.equal(annotations['flow'], 'fork-join');
    assert.match(String(annotations['execution']), /^Run 4 tasks in \d+ ms$/);
    const add = records.find((t) => t['service'] === 'flow.compute');
    assert.deepEqual(add?.['annotations'], { flow: 'fork-join', task: 'add' });
    assert.equal(add?.['from'], 'task.executor');
    const spans = engine.spans.getFinishedSpans().filter((s) => s.attributes['gw.flow.task'] === 'add');
    assert.ok(spans.some((s) => s.attributes['gw.flow.id'] === 'fork-join'));
  });
});
