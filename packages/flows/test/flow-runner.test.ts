/**
 * The runner over hand-built compiled flows (the compiler's own tests cover YAML → graph): every
 * task calls functions of an in-memory registry.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppException } from '@gatehouse/functions';
import type { CompiledFlow, CompiledTask, ExecutionType } from '../src/compile/compiled-flow.ts';
import { compileMapping } from '../src/mapping/compile-mapping.ts';
import { FlowRunner } from '../src/run/flow-runner.ts';
import type { FlowTrace } from '../src/run/flow-trace.ts';

type Fn = (body: Record<string, unknown>, headers: Record<string, string>) => unknown;

const functions: Record<string, Fn> = {
  echo: (body) => body,
  add: (body) => ({ sum: Number(body['a']) + Number(body['b']) }),
  fail: (body) => {
    throw new AppException(Number(body['status'] ?? 400), 'Simulated Exception');
  },
  slow: async (body) => {
    await new Promise((r) => setTimeout(r, Number(body['ms'])));
    return { slept: body['ms'] };
  },
};

const quiet = { info() {}, warn() {}, error() {} };

/** What the external state machine `ext.sm` was sent, in order. */
const extCalls: Array<{ headers: Record<string, string>; body: unknown }> = [];
functions['ext.sm'] = (body, headers) => {
  extCalls.push({ headers, body });
  return true;
};

/** A trace that records which flow step each flow instance started under. */
function traceOf(id: string, path: string) {
  const flowsUnder: Array<{ flow: string; parent: unknown }> = [];
  const trace: FlowTrace = {
    id,
    path,
    beginFlow: (flowId, parent) => {
      flowsUnder.push({ flow: flowId, parent });
      return `step:${flowId}`;
    },
    endFlow() {},
    beginTask: (_flowId, taskName) => `task:${taskName}`,
    endTask() {},
  };
  return { trace, flowsUnder };
}

function task(
  flow: string,
  name: string,
  process: string,
  execution: ExecutionType,
  input: string[],
  output: string[],
  more: Partial<CompiledTask> = {},
): CompiledTask {
  return {
    name,
    functionRoute: process,
    description: name,
    execution,
    inputMappings: input.map((l) => compileMapping(l, { flow, task: name, kind: 'input' })),
    outputMappings: output.map((l) =>
      compileMapping(l, { flow, task: name, kind: 'output', decisionTask: execution === 'decision' }),
    ),
    next: [],
    pipeline: [],
    ...more,
  };
}

function flow(id: string, tasks: CompiledTask[], more: Partial<CompiledFlow> = {}): CompiledFlow {
  return {
    id,
    description: id,
    ttlMs: 5000,
    firstTask: tasks[0]!.name,
    tasks: new Map(tasks.map((t) => [t.name, t])),
    file: `${id}.yml`,
    ...more,
  };
}

function runnerOf(...flows: CompiledFlow[]): FlowRunner {
  const byId = new Map(flows.map((f) => [f.id, f]));
  return new FlowRunner({
    flows: byId,
    functions: {
      has: (route) => route in functions,
      call: (route, headers, body) => functions[route]!(body as Record<string, unknown>, headers),
    },
    logger: quiet,
  });
}

describe('FlowRunner', () => {
  it('runs a sequential flow to its end, cid in model.cid', async () => {
    const f = flow('seq', [
      task('seq', 'one', 'add', 'sequential', ['input.a -> a', 'input.b -> b'], ['result.sum -> model.sum'], {
        next: ['two'],
      }),
      task(
        'seq',
        'two',
        'echo',
        'end',
        ['model.sum -> sum', 'model.cid -> cid'],
        ['result -> output.body', 'int(201) -> output.status'],
      ),
    ]);
    const result = await runnerOf(f).run('seq', { a: 2, b: 3 }, { cid: 'c1' });
    assert.deepEqual(result, { kind: 'response', status: 201, headers: {}, body: { sum: 5, cid: 'c1' } });
  });

  it('joins a fork after both branches; a branch failure goes to the flow handler', async () => {
    const tasks = [
      task('fj', 'split', 'echo', 'fork', [], [], { next: ['l', 'r'], join: 'join' }),
      task('fj', 'l', 'add', 'sink', ['int(1) -> a', 'input.fail -> b'], ['result.sum -> model.l']),
      task('fj', 'r', 'slow', 'sink', ['int(20) -> ms'], ['result.slept -> model.r']),
      task('fj', 'join', 'echo', 'end', ['model.l -> l', 'model.r -> r'], ['result -> output.body']),
      task(
        'fj',
        'handler',
        'echo',
        'end',
        ['error.code -> code', 'error.task -> task'],
        ['result -> output.body'],
      ),
    ];
    const f = flow('fj', tasks, { exceptionHandler: 'handler' });
    assert.deepEqual((await runnerOf(f).run('fj', { fail: 2 }, { cid: 'x' })) as unknown, {
      kind: 'response',
      status: 200,
      headers: {},
      body: { l: 3, r: 20 },
    });
  });

  it('aborts with 408 Flow timeout for N ms at the deadline', async () => {
    const f = flow('slow', [
      task('slow', 'wait', 'slow', 'end', ['int(500) -> ms'], ['result -> output.body']),
    ]);
    const result = await runnerOf(f).run('slow', {}, { cid: 'x', ttlMs: 100 });
    assert.deepEqual(result, { kind: 'abort', status: 408, message: 'Flow timeout for 100 ms' });
  });

  it('runEager: a flow of synchronous functions answers before it returns, and leaves no timer', () => {
    const f = flow('now', [
      task('now', 'one', 'add', 'sequential', ['input.a -> a', 'input.b -> b'], ['result.sum -> model.sum'], {
        next: ['two'],
      }),
      task('now', 'two', 'echo', 'end', ['model.sum -> s'], ['result.s -> output.body.sum']),
    ]);
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const result = runnerOf(f).runEager('now', { a: 1, b: 2 }, { cid: 'x' });
    assert.deepEqual(result, { kind: 'response', status: 200, headers: {}, body: { sum: 3 } });
    assert.equal(timers(), before, 'no deadline timer left behind');
  });

  it('runEager: a flow still running gives a promise, and its deadline holds', async () => {
    const f = flow('later', [
      task('later', 'wait', 'slow', 'end', ['int(500) -> ms'], ['result -> output.body']),
    ]);
    const result = runnerOf(f).runEager('later', {}, { cid: 'x', ttlMs: 100 });
    assert.ok(result instanceof Promise);
    assert.deepEqual(await result, { kind: 'abort', status: 408, message: 'Flow timeout for 100 ms' });
  });

  it('gives each instance its own id, a version-4 UUID without dashes (model.instance)', async () => {
    const f = flow('ids', [task('ids', 'one', 'echo', 'end', [], ['model.instance -> output.body.id'])]);
    const runner = runnerOf(f);
    const ids = new Set<string>();
    // more than one pool of random bytes (256 ids) is drawn
    for (let i = 0; i < 600; i++) {
      const result = await runner.run('ids', {}, { cid: 'x' });
      const id = (result as { body: { id: string } }).body.id;
      assert.match(id, /^[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
      ids.add(id);
    }
    assert.equal(ids.size, 600);
  });

  it('runs the task handler with error.*; without one the failure aborts', async () => {
    const tasks = [
      task('ex', 'bad', 'fail', 'end', ['int(409) -> status'], [], { exception: 'h' }),
      task(
        'ex',
        'h',
        'echo',
        'end',
        ['error.code -> code', 'error.message -> message', 'error.task -> task'],
        ['result -> output.body'],
      ),
    ];
    const result = await runnerOf(flow('ex', tasks)).run('ex', {}, { cid: 'x' });
    assert.deepEqual(result, {
      kind: 'response',
      status: 200,
      headers: {},
      body: { code: 409, message: 'Simulated Exception', task: 'bad' },
    });
    const bare = flow('bare', [task('bare', 'bad', 'fail', 'end', ['int(418) -> status'], [])]);
    const aborted = await runnerOf(bare).run('bare', {}, { cid: 'x' });
    assert.equal(aborted.kind, 'abort');
    assert.equal(aborted.status, 418);
  });

  it('decides by boolean and number, and refuses an invalid decision', async () => {
    const tasks = [
      task('d', 'pick', 'echo', 'decision', ['input.v -> v'], ['result.v -> decision'], { next: ['a', 'b'] }),
      task('d', 'a', 'echo', 'end', [], ['text(a) -> output.body']),
      task('d', 'b', 'echo', 'end', [], ['text(b) -> output.body']),
    ];
    const runner = runnerOf(flow('d', tasks));
    assert.equal(((await runner.run('d', { v: true }, { cid: 'x' })) as { body: unknown }).body, 'a');
    assert.equal(((await runner.run('d', { v: false }, { cid: 'x' })) as { body: unknown }).body, 'b');
    assert.equal(((await runner.run('d', { v: 2 }, { cid: 'x' })) as { body: unknown }).body, 'b');
    assert.deepEqual(await runner.run('d', { v: 3 }, { cid: 'x' }), {
      kind: 'abort',
      status: 500,
      message: 'Task pick returned invalid decision (3)',
    });
  });

  it('loops a pipeline with for and break', async () => {
    const conditions = [{ key: 'model.quit', action: 'break' as const }];
    const tasks = [
      task('p', 'begin', 'echo', 'pipeline', [], [], {
        pipeline: ['step'],
        next: ['done'],
        loop: {
          kind: 'for',
          init: { key: 'model.n', value: 0 },
          compare: { left: { key: 'model.n' }, op: '<', right: { value: 5 } },
          step: { key: 'model.n', delta: 1 },
          conditions,
        },
        loopConditions: conditions,
      }),
      task(
        'p',
        'step',
        'echo',
        'sequential',
        ['model.n -> n'],
        ['result.n -> model.seen[]', 'f:eq(model.n, int(2)) -> model.quit'],
      ),
      task('p', 'done', 'echo', 'end', [], ['model.seen -> output.body.seen', 'model.n -> output.body.n']),
    ];
    const result = await runnerOf(flow('p', tasks)).run('p', {}, { cid: 'x' });
    assert.deepEqual((result as { body: unknown }).body, { seen: [0, 1, 2], n: 2 });
  });

  it('breaks a pipeline without a loop statement on its condition (Mercury checks them anyway)', async () => {
    const tasks = [
      task('q', 'begin', 'echo', 'pipeline', [], [], {
        pipeline: ['one', 'two', 'three'],
        next: ['done'],
        loopConditions: [{ key: 'model.quit', action: 'break' }],
      }),
      task('q', 'one', 'echo', 'sequential', [], ['text(one) -> model.seen[]']),
      task(
        'q',
        'two',
        'echo',
        'sequential',
        [],
        ['text(two) -> model.seen[]', 'boolean(true) -> model.quit'],
      ),
      task('q', 'three', 'echo', 'sequential', [], ['text(three) -> model.seen[]']),
      task('q', 'done', 'echo', 'end', [], ['model.seen -> output.body.seen']),
    ];
    const result = await runnerOf(flow('q', tasks)).run('q', {}, { cid: 'x' });
    assert.deepEqual((result as { body: unknown }).body, { seen: ['one', 'two'] });
  });

  it('calls every fork branch before any branch completes, with synchronous functions too', async () => {
    // The right branch's input mapping must see the model as the fork left it, not the left
    // branch's output: a branch's completion never runs inside the step that started the fork.
    const tasks = [
      task('order', 'split', 'echo', 'fork', [], [], { next: ['l', 'r'], join: 'join' }),
      task('order', 'l', 'echo', 'sink', ['text(left) -> v'], ['result.v -> model.left']),
      task(
        'order',
        'r',
        'echo',
        'sink',
        ['model.left -> saw', 'text(right) -> v'],
        ['result -> model.right'],
      ),
      task(
        'order',
        'join',
        'echo',
        'end',
        [],
        ['model.left -> output.body.left', 'model.right -> output.body.right'],
      ),
    ];
    const result = await runnerOf(flow('order', tasks)).run('order', {}, { cid: 'x' });
    assert.deepEqual((result as { body: unknown }).body, { left: 'left', right: { v: 'right' } });
  });

  it('runs 20 000 pipeline rounds of synchronous functions without running out of stack', async () => {
    const rounds = 20_000;
    const tasks = [
      task('long', 'begin', 'echo', 'pipeline', [], [], {
        pipeline: ['step'],
        next: ['done'],
        loop: {
          kind: 'for',
          init: { key: 'model.n', value: 0 },
          compare: { left: { key: 'model.n' }, op: '<', right: { value: rounds } },
          step: { key: 'model.n', delta: 1 },
          conditions: [],
        },
      }),
      task('long', 'step', 'echo', 'sequential', ['model.n -> n'], ['result.n -> model.last']),
      task('long', 'done', 'echo', 'end', [], ['model.last -> output.body.last', 'model.n -> output.body.n']),
    ];
    const result = await runnerOf(flow('long', tasks, { ttlMs: 60_000 })).run('long', {}, { cid: 'x' });
    assert.deepEqual(result, {
      kind: 'response',
      status: 200,
      headers: {},
      body: { last: rounds - 1, n: rounds },
    });
  });

  it('runs a sub-flow that writes the parent model', async () => {
    const child = flow('child', [
      task(
        'child',
        'c',
        'echo',
        'end',
        ['input.body.x -> x'],
        ['boolean(true) -> model.parent.seen', 'result -> output.body', 'int(201) -> output.status'],
      ),
    ]);
    const parent = flow('parent', [
      task(
        'parent',
        'call',
        'flow://child',
        'end',
        ['input.x -> x'],
        ['status -> output.status', 'result -> output.body.child', 'model.root.seen -> output.body.seen'],
        { subFlow: 'child' },
      ),
    ]);
    const result = await runnerOf(parent, child).run('parent', { x: 7 }, { cid: 'x' });
    assert.deepEqual(result, {
      kind: 'response',
      status: 201,
      headers: {},
      body: { child: { x: 7 }, seen: true },
    });
  });

  it('sends ext: key-values with the instance trace (Mercury: a state machine keyed by trace id)', async () => {
    extCalls.length = 0;
    const f = flow(
      'ext',
      [task('ext', 'put', 'echo', 'end', ['input.user -> ext:user', 'model.none -> ext:gone'], [])],
      { externalStateMachine: 'ext.sm' },
    );
    const { trace } = traceOf('trace-1', 'PUT /api/ext');
    await runnerOf(f).run('ext', { user: 'Peter' }, { cid: 'c1', trace });
    await new Promise((resolve) => setImmediate(resolve));
    const sent = {
      my_route: 'ext.sm',
      my_correlation_id: 'c1',
      my_trace_id: 'trace-1',
      my_trace_path: 'PUT /api/ext',
    };
    assert.deepEqual(extCalls, [
      { headers: { type: 'put', key: 'user', ...sent }, body: { data: 'Peter' } },
      { headers: { type: 'remove', key: 'gone', ...sent }, body: {} },
    ]);
  });

  it('runs a flow:// state machine as a child of the instance, under its trace step', async () => {
    extCalls.length = 0;
    const machine = flow('machine', [
      task(
        'machine',
        'save',
        'ext.sm',
        'end',
        ['input.header.key -> header.key', 'input.body.data -> data'],
        [],
      ),
    ]);
    const f = flow('ext', [task('ext', 'put', 'echo', 'end', ['input.user -> ext:user'], [])], {
      externalStateMachine: 'flow://machine',
    });
    const { trace, flowsUnder } = traceOf('trace-2', 'PUT /api/ext/flow');
    await runnerOf(f, machine).run('ext', { user: 'Mary' }, { cid: 'c2', trace });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(extCalls.length, 1);
    assert.equal(extCalls[0]!.headers['my_trace_id'], 'trace-2');
    assert.deepEqual(extCalls[0]!.body, { data: 'Mary' });
    assert.deepEqual(flowsUnder, [
      { flow: 'ext', parent: undefined },
      { flow: 'machine', parent: 'step:ext' },
    ]);
  });

  it('answers 500 for an unknown flow', async () => {
    assert.deepEqual(await runnerOf().run('nope', {}, { cid: 'x' }), {
      kind: 'abort',
      status: 500,
      message: 'Flow nope not found',
    });
  });
});
