import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { type CompiledFlow, compileFlow, FlowValidationError } from '../src/index.ts';

// biome-ignore lint/suspicious/noExplicitAny: a parsed YAML document that the tests edit freely
type Doc = Record<string, any>;

/** A valid flow: greeting (sequential) → done (end). `edit` changes the parsed document first. */
function flowDoc(edit: (doc: Doc) => void = () => {}): Doc {
  const doc = parse(`
flow:
  id: 'demo'
  description: 'demo flow'
  ttl: 10s
first.task: 'greeting'
tasks:
  - name: 'greeting'
    process: 'greeting.demo'
    description: 'say hello'
    execution: sequential
    input: ['input.body -> *']
    output: ['result -> model.greeting']
    next: ['done']
  - name: 'done'
    process: 'no.op'
    description: 'answer'
    execution: end
    input: ['model.greeting -> greeting']
    output: ['result -> output.body']
`);
  edit(doc);
  return doc;
}

function task(doc: Doc, i = 0): Doc {
  return doc['tasks'][i];
}

interface Outcome {
  flow?: CompiledFlow;
  error?: string;
  dropped: string[];
}

function compile(doc: Doc, loaded: string[] = []): Outcome {
  const dropped: string[] = [];
  try {
    const flow = compileFlow(doc, 'demo.yml', {
      isLoaded: (id) => loaded.includes(id),
      dropTask: (m) => dropped.push(m),
    });
    return { flow, dropped };
  } catch (e) {
    assert.ok(e instanceof FlowValidationError, String(e));
    return { error: e.message, dropped };
  }
}

function refusal(edit: (doc: Doc) => void): string | undefined {
  return compile(flowDoc(edit)).error;
}

describe('compileFlow: the compiled graph', () => {
  it('compiles a valid flow into an immutable graph', () => {
    const { flow, error } = compile(flowDoc());
    assert.equal(error, undefined);
    assert.equal(flow!.id, 'demo');
    assert.equal(flow!.ttlMs, 10000);
    assert.equal(flow!.firstTask, 'greeting');
    const greeting = flow!.tasks.get('greeting')!;
    assert.equal(greeting.functionRoute, 'greeting.demo');
    assert.deepEqual(greeting.next, ['done']);
    assert.equal(greeting.inputMappings[0]!.text, 'input.body -> *');
    assert.ok(Object.isFrozen(flow) && Object.isFrozen(greeting));
  });

  it('names a task by process when it has no name; flow:// is a sub-flow', () => {
    const { flow } = compile(
      flowDoc((d) => {
        delete task(d)['name'];
        task(d)['process'] = 'flow://child';
        task(d)['ttl'] = '2s';
        task(d)['delay'] = '200ms';
        d['first.task'] = 'flow://child';
      }),
    );
    const child = flow!.tasks.get('flow://child')!;
    assert.equal(child.subFlow, 'child');
    assert.equal(child.ttlMs, 2000);
    assert.equal(child.delayMs, 200);
  });

  it('reads flow.exception, task exception, delay variables, fork, dynamic fork and pipeline loops', () => {
    const { flow, error } = compile(
      flowDoc((d) => {
        d['flow']['exception'] = 'done';
        Object.assign(task(d), {
          execution: 'fork',
          next: ['done'],
          join: 'done',
          source: 'model.list',
          exception: 'done',
          delay: 'model.wait',
        });
        d['tasks'].push({
          name: 'loop',
          process: 'no.op',
          description: 'loop',
          execution: 'pipeline',
          pipeline: ['done'],
          next: ['done'],
          loop: {
            statement: 'for (model.n = 0; model.n < 3; model.n++)',
            condition: ['if (model.quit) break', 'if (model.skip) continue'],
          },
        });
        d['tasks'].push({
          name: 'w',
          process: 'no.op',
          description: 'w',
          execution: 'pipeline',
          pipeline: ['a', 'b'],
          next: ['done'],
          loop: { statement: 'while ( model.running )' },
        });
        d['tasks'].push({
          name: 'c',
          process: 'no.op',
          description: 'c',
          execution: 'pipeline',
          pipeline: ['a'],
          next: ['done'],
          loop: { condition: 'if (model.stop) break' },
        });
      }),
    );
    assert.equal(error, undefined);
    assert.equal(flow!.exceptionHandler, 'done');
    const fork = flow!.tasks.get('greeting')!;
    assert.deepEqual(
      [fork.join, fork.source, fork.exception, fork.delayVar],
      ['done', 'model.list', 'done', 'model.wait'],
    );
    const loop = flow!.tasks.get('loop')!;
    assert.deepEqual(loop.loop, {
      kind: 'for',
      init: { key: 'model.n', value: 0 },
      compare: { left: { key: 'model.n' }, op: '<', right: { value: 3 } },
      step: { key: 'model.n', delta: 1 },
      conditions: [
        { key: 'model.quit', action: 'break' },
        { key: 'model.skip', action: 'continue' },
      ],
    });
    assert.deepEqual(loop.loopConditions, loop.loop!.conditions);
    assert.deepEqual(flow!.tasks.get('w')!.loop, { kind: 'while', key: 'model.running', conditions: [] });
    assert.equal(flow!.tasks.get('c')!.loop, undefined);
    assert.deepEqual(flow!.tasks.get('c')!.loopConditions, [{ key: 'model.stop', action: 'break' }]);
  });

  it('parses flow.ttl as Mercury does: units s m h d, bare seconds, at least one second', () => {
    const ttl = (value: string) => compile(flowDoc((d) => (d['flow']['ttl'] = value))).flow!.ttlMs;
    assert.deepEqual(
      ['10s', '2m', '1h', '1d', '15', '500ms', '1.5s', 'abc'].map(ttl),
      [10000, 120000, 3600000, 86400000, 15000, 1000, 1000, 1000],
    );
  });

  it('a later task with the same name replaces the earlier one', () => {
    const { flow } = compile(flowDoc((d) => d['tasks'].push({ ...task(d, 1), process: 'other.route' })));
    assert.equal(flow!.tasks.get('done')!.functionRoute, 'other.route');
    assert.equal(flow!.tasks.size, 2);
  });
});

describe('compileFlow: rules that refuse the flow (exact messages)', () => {
  const header = 'check flow.id, flow.description, flow.ttl, first.task';

  it('flow header keys', () => {
    assert.equal(
      refusal((d) => delete d['flow']['id']),
      header,
    );
    assert.equal(
      refusal((d) => delete d['flow']['description']),
      header,
    );
    assert.equal(
      refusal((d) => (d['flow']['ttl'] = 10)),
      header,
    );
    assert.equal(
      refusal((d) => delete d['first.task']),
      header,
    );
  });

  it('duplicate id, empty tasks', () => {
    assert.equal(compile(flowDoc(), ['demo']).error, "Flow 'demo' already exists");
    assert.equal(
      refusal((d) => (d['tasks'] = [])),
      "'tasks' section is empty or invalid",
    );
    assert.equal(
      refusal((d) => (d['tasks'] = 'x')),
      "'tasks' section is empty or invalid",
    );
  });

  it('task name, input/output lists, description, execution', () => {
    assert.equal(
      refusal((d) => {
        delete task(d)['name'];
        delete task(d)['process'];
      }),
      'task[0]. task name must not be empty',
    );
    assert.equal(
      refusal((d) => (task(d)['input'] = 'x')),
      'task greeting. input must be a list',
    );
    assert.equal(
      refusal((d) => (task(d)['output'] = 'x')),
      'task greeting. output must be a list',
    );
    assert.equal(
      refusal((d) => (task(d)['description'] = ' ')),
      'task greeting. description must not be empty',
    );
    assert.equal(
      refusal((d) => delete task(d)['execution']),
      'task greeting. execution type must not be empty',
    );
    assert.equal(
      refusal((d) => (task(d)['execution'] = 'serial')),
      "task greeting. execution type 'serial' must be one of [decision, response, end, sequential, parallel, pipeline, fork, sink]",
    );
  });

  it('task names and sub-flow syntax', () => {
    assert.equal(
      refusal((d) => (task(d)['name'] = 'http://x')),
      'invalid task name=http://x. Syntax is flow://{flow-name}',
    );
    assert.equal(
      refusal((d) => (task(d)['process'] = 'http://x')),
      'invalid task process=http://x. Syntax is flow://{flow-name}',
    );
    assert.equal(
      refusal((d) => (task(d)['name'] = 'flow://child')),
      'invalid task process=flow://child. process tag not allowed when name is a sub-flow',
    );
  });

  it('delay and task ttl', () => {
    assert.equal(
      refusal((d) => (task(d)['delay'] = 10000)),
      'invalid task greeting. delay must be less than TTL',
    );
    assert.equal(
      refusal((d) => (task(d)['delay'] = 'wait')),
      "invalid task greeting. delay variable must starts with 'model.'",
    );
    assert.equal(
      refusal((d) => (task(d)['ttl'] = '2s')),
      'invalid task greeting. ttl is only applicable to a sub-flow task',
    );
    const sub = (ttl: string) => refusal((d) => Object.assign(task(d), { process: 'flow://child', ttl }));
    assert.equal(sub('10s'), 'invalid task greeting. ttl must be less than flow.ttl');
    assert.equal(sub('0s'), 'invalid task greeting. ttl must be a positive duration (e.g. 8s)');
  });

  it('fork join, next lists, dynamic fork source', () => {
    assert.equal(
      refusal((d) => (task(d)['execution'] = 'fork')),
      'invalid task greeting. Missing a join task',
    );
    assert.equal(
      refusal((d) => delete task(d)['next']),
      'Invalid task greeting. Missing a list of next tasks',
    );
    assert.equal(
      refusal((d) => (task(d)['next'] = 'done')),
      "invalid task greeting. 'next' should be a list",
    );
    assert.equal(
      refusal((d) => (task(d)['next'] = ['a', 'b'])),
      'Invalid sequential task greeting. Expected one next task, Actual: 2',
    );
    assert.equal(
      refusal((d) =>
        Object.assign(task(d), { execution: 'parallel', next: ['a', 'b'], source: 'model.list' }),
      ),
      'Invalid parallel task greeting. Expected one next task if dynamic model source is used, Actual: 2',
    );
    assert.equal(
      refusal((d) => Object.assign(task(d), { execution: 'fork', join: 'done', source: 'input.list' })),
      'Invalid fork task greeting. Source must start with model namespace, Actual: input.list',
    );
  });

  it('pipeline steps and loops', () => {
    const pipeline = (extra: Record<string, unknown>) =>
      refusal((d) => Object.assign(task(d), { execution: 'pipeline', pipeline: ['done'], ...extra }));
    assert.equal(pipeline({ pipeline: [] }), 'invalid task greeting. Missing a list of pipeline steps');
    assert.equal(pipeline({ pipeline: 'done' }), "invalid task greeting. 'pipeline' should be a list");
    assert.equal(
      pipeline({ next: ['a', 'b'] }),
      'Invalid pipeline task greeting. Expected one next task, Actual: 2',
    );
    const loop = (statement: string) => pipeline({ loop: { statement } });
    const example = "e.g. 'for (model.n = 0; model.n < 3; model.n++)'";
    assert.equal(loop('for model.n'), 'invalid task greeting. Please check loop.statement');
    assert.equal(loop('until (model.n)'), "invalid task greeting. loop.statement must be 'for' or 'while'");
    assert.equal(
      loop('while (model.a; model.b)'),
      "invalid task greeting. 'while' loop should have only one value",
    );
    assert.equal(loop('while (running)'), "invalid task greeting. 'while' should use a model key");
    assert.equal(loop('for (model.n++)'), "invalid task greeting. 'for' loop should have 2 or 3 segments");
    assert.equal(
      loop('for (n = 0; model.n < 3; model.n++)'),
      `invalid task greeting. check for-loop initializer. ${example}`,
    );
    assert.equal(
      loop('for (model.n = 0; model.n != 3; model.n++)'),
      `invalid task greeting. check for-loop syntax. ${example}`,
    );
    assert.equal(
      loop('for (model.n = 0; model.n < 3; model.m++)'),
      "invalid task greeting. 'for' loop has invalid comparator or sequencer",
    );
    assert.equal(
      loop('for (model.n < model.n; model.n++)'),
      "invalid task greeting. 'for' loop has invalid comparator or sequencer",
    );
    assert.equal(
      loop('for (1 < 3; model.n++)'),
      "invalid task greeting. 'for' loop has invalid comparator or sequencer",
    );
    assert.equal(
      pipeline({ loop: { condition: 'unless (model.x) break' } }),
      'invalid task greeting. loop condition syntax error - unless (model.x) break',
    );
    assert.equal(
      pipeline({ loop: { condition: ['if (model.x) break', 'if model.y stop'] } }),
      'invalid task greeting. loop conditions syntax error - [if (model.x) break, if model.y stop]',
    );
  });

  it('end task, external state machine, incomplete mappings', () => {
    assert.equal(
      refusal((d) => (task(d, 1)['execution'] = 'sink')),
      'flow must have at least one end task',
    );
    assert.equal(
      refusal((d) => task(d)['input'].push('model.x -> ext:key')),
      'flow is missing external.state.machine',
    );
    assert.equal(
      refusal((d) => task(d)['input'].push('input.body. -> x')),
      'flow has invalid data mappings',
    );
    const ok = compile(
      flowDoc((d) => {
        task(d)['input'].push('model.x -> ext:key');
        d['external.state.machine'] = 'v1.ext';
      }),
    );
    assert.equal(ok.flow!.externalStateMachine, 'v1.ext');
  });

  it('the end task counts even when the task is dropped for its mapping', () => {
    const { flow, dropped } = compile(flowDoc((d) => task(d, 1)['output'].push('result -> body')));
    assert.equal(flow!.tasks.has('done'), false);
    assert.deepEqual(dropped, [
      'Skip invalid task done in demo.yml that has invalid output mapping - result -> body',
    ]);
  });
});

describe('compileFlow: rules that drop only the task (exact messages)', () => {
  it('drops a task with an invalid or reserved-key mapping, or a decision with fewer than 2 next', () => {
    const { flow, dropped } = compile(
      flowDoc((d) => {
        task(d)['input'].push('text(hacked) -> model.cid');
        d['tasks'].push({
          name: 'choose',
          process: 'no.op',
          description: 'd',
          execution: 'decision',
          next: ['done'],
          output: ['result -> decision'],
        });
        d['tasks'].push({
          name: 'fine',
          process: 'no.op',
          description: 'd',
          execution: 'decision',
          next: ['done', 'greeting'],
          output: ['result -> decision'],
        });
      }),
    );
    assert.deepEqual(dropped, [
      "Skip invalid task (input) greeting in demo.yml that overwrites the reserved state-machine key 'model.cid' - text(hacked) -> model.cid",
      'Decision task choose in demo.yml must have at least 2 next tasks',
    ]);
    assert.deepEqual([...flow!.tasks.keys()], ['done', 'fine']);
  });
});
