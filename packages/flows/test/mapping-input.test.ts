import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AppException } from '@gatehouse/functions';
import { runInput } from './mapping-harness.ts';

const httpInput = {
  method: 'POST',
  header: { 'x-user': 'ann', 'content-type': 'application/json' },
  path_parameter: { id: '42' },
  query: { q: 'hello', tags: ['a', 'b'] },
  body: { name: 'Ann', list: [{ w: '1' }, { w: '2' }, { w: '3' }], nothing: null },
};

function rejectsWith(status: number, message: string) {
  return (e: unknown) => e instanceof AppException && e.status === status && e.message === message;
}

describe('input mapping: sources', () => {
  it('reads the parts of the HTTP input dataset into body keys', () => {
    const { body } = runInput(
      [
        'input.method -> method',
        'input.header.X-User -> user',
        'input.path_parameter.id -> id',
        'input.query.tags[1] -> tag',
        'input.body.list[2].w -> third',
        'input -> everything.copy',
      ],
      { input: httpInput },
    );
    assert.deepEqual(
      { ...(body as object), everything: undefined },
      {
        method: 'POST',
        user: 'ann',
        id: '42',
        tag: 'b',
        third: '3',
        everything: undefined,
      },
    );
    assert.deepEqual((body as { everything: { copy: unknown } }).everything.copy, httpInput);
  });

  it('reads constants with their type rules', () => {
    const { body } = runInput([
      'text( World!) -> spaced',
      'text(x -> y) -> formula',
      'int(12.9) -> i',
      'int(abc) -> bad_int',
      'int(3000000000) -> overflow',
      'long(3000000000.5) -> l',
      'float(12.345) -> f',
      'double(x) -> bad_double',
      'boolean(TRUE) -> yes',
      'boolean(yes) -> no',
      'map(k1=v1, k2 = v2 ) -> m',
    ]);
    assert.deepEqual(body, {
      spaced: ' World!',
      formula: 'x -> y',
      i: 12,
      bad_int: -1,
      overflow: -1,
      l: 3000000000,
      f: 12.345,
      bad_double: -1,
      yes: true,
      no: false,
      m: { k1: 'v1', k2: 'v2' },
    });
  });

  it('reads map(config.key) from the application configuration', () => {
    const config: Record<string, unknown> = { 'app.list': ['x', 'y'], 'app.name': 'demo' };
    const { body } = runInput(['map(app.list) -> list', 'map(app.name) -> name', 'map(app.none) -> none'], {
      hooks: { config: (k) => config[k] },
    });
    assert.deepEqual(body, { list: ['x', 'y'], name: 'demo' });
  });

  it('reads files as text, JSON, bytes, and a missing file as null that removes a model key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'flows-file-'));
    writeFileSync(join(dir, 'a.txt'), 'hello');
    writeFileSync(join(dir, 'a.json'), '{"k":[1,2]}');
    writeFileSync(join(dir, 'plain.json'), 'not json');
    const { body, model } = runInput(
      [
        `file(text:${dir}/a.txt) -> text`,
        `file(json:${dir}/a.json) -> json`,
        `file(json:${dir}/plain.json) -> plain`,
        `file(${dir}/a.txt) -> bytes`,
        `file(text:${dir}/none.txt) -> model.kept`,
        `classpath(text:/a.txt) -> resource`,
      ],
      { model: { kept: 'was here' }, hooks: { resourceFolder: dir, fileFolders: [dir] } },
    );
    const b = body as Record<string, unknown>;
    assert.equal(b['text'], 'hello');
    assert.deepEqual(b['json'], { k: [1, 2] });
    assert.equal(b['plain'], 'not json');
    assert.deepEqual(Buffer.from(b['bytes'] as Uint8Array).toString(), 'hello');
    assert.equal(b['resource'], 'hello');
    assert.equal('kept' in model, false);
  });

  it('reads classpath(...) only inside the resource folder and file(...) only inside its folders', () => {
    const dir = mkdtempSync(join(tmpdir(), 'flows-file-'));
    writeFileSync(join(dir, 'outside.txt'), 'secret');
    const resources = join(dir, 'resources');
    mkdirSync(resources);
    const refusal = (lines: string[], model: Record<string, unknown>, hooks: Record<string, unknown>) =>
      assert.throws(
        () => runInput(lines, { model, hooks }),
        (err: unknown) => err instanceof AppException && err.status === 400 && /is outside/.test(err.message),
      );
    refusal(
      ['classpath(text:/{model.name}) -> x'],
      { name: '../outside.txt' },
      { resourceFolder: resources },
    );
    refusal(
      [`file(text:${resources}/{model.name}) -> x`],
      { name: '../outside.txt' },
      { fileFolders: [resources] },
    );
    assert.throws(() => runInput([`file(text:${dir}/outside.txt) -> x`]), /is outside flow\.file\.folders/);
  });

  it('reads the error dataset in a handler and the dynamic fork item and index', () => {
    const { body } = runInput(['error.code -> status', 'error.message -> message', 'error.task -> task'], {
      error: { task: 'a.task', code: 401, message: 'Simulated Exception' },
    });
    assert.deepEqual(body, { status: 401, message: 'Simulated Exception', task: 'a.task' });
    const branch = runInput(
      ['model.list.ITEM -> item', 'model.list.INDEX -> index'],
      { model: { list: ['x', 'y'] } },
      {
        forkItem: { source: 'model.list', item: 'y', index: 1 },
      },
    );
    assert.deepEqual(branch.body, { item: 'y', index: 1 });
  });

  it('reads JSON paths, wildcards giving lists', () => {
    const { body } = runInput(
      [
        '$.input.body.list[*].w -> ws',
        '$.input.body.name -> name',
        "$.input.header['x-user'] -> user",
        '$..w -> all',
      ],
      { input: httpInput },
    );
    assert.deepEqual(body, { ws: ['1', '2', '3'], name: 'Ann', user: 'ann', all: ['1', '2', '3'] });
  });
});

describe('input mapping: targets', () => {
  it('`*` with a map replaces the body built so far; later lines add to it', () => {
    const { body } = runInput(['text(a) -> lost', 'input.body -> *', 'text(b) -> added'], {
      input: { body: { k: 1 } },
    });
    assert.deepEqual(body, { k: 1, added: 'b' });
  });

  it('`*` with a non-map becomes the whole input', () => {
    const { body } = runInput(['text(a) -> dropped', 'input.body.list -> *'], { input: httpInput });
    assert.deepEqual(body, httpInput.body.list);
  });

  it('`header` copies a map into event headers as text, `header.<name>` sets one', () => {
    const warnings: string[] = [];
    const { headers, body } = runInput(
      [
        'input.body.h -> header',
        'int(5) -> header.count',
        'input.body.s -> header',
        'model.none -> header.gone',
      ],
      {
        input: { body: { h: { a: 1, b: true, n: null }, s: 'text' } },
        hooks: { warn: (m) => warnings.push(m) },
      },
    );
    assert.deepEqual(headers, { a: '1', b: 'true', count: '5' });
    assert.deepEqual(body, {});
    assert.deepEqual(warnings, [
      "Invalid input mapping 'input.body.s -> header' - expect: Map, actual: String",
    ]);
  });

  it('writes the model at once (later lines see it), deep-copying maps and lists', () => {
    const input = { body: { m: { k: [1] } } };
    const { body, model } = runInput(
      [
        'input.body.m -> model.copy',
        'model.copy.k[0] -> first',
        'text(x) -> model.items[]',
        'text(y) -> model.items[]',
      ],
      { input },
    );
    (model['copy'] as { k: number[] }).k.push(2);
    assert.deepEqual(input.body.m.k, [1]);
    assert.deepEqual(body, { first: 1 });
    assert.deepEqual(model['items'], ['x', 'y']);
  });

  it('model.parent and model.root write the shared map of the root flow', () => {
    const shared: Record<string, unknown> = {};
    const { body } = runInput(['text(hi) -> model.parent.greeting', 'model.root.greeting -> seen'], {
      model: { parent: shared, root: shared },
    });
    assert.deepEqual(shared, { greeting: 'hi' });
    assert.deepEqual(body, { seen: 'hi' });
  });

  it('sends ext: targets to the external state machine, null as a removal', () => {
    const calls: [string, unknown][] = [];
    runInput(['input.body.name -> ext:user', 'model.none -> ext:gone'], {
      input: httpInput,
      hooks: { external: (k, v) => calls.push([k, v]) },
    });
    assert.deepEqual(calls, [
      ['user', 'Ann'],
      ['gone', null],
    ]);
  });

  it('splits a three-part line through a model key, dropping the middle type', () => {
    const { body, model } = runInput([
      'boolean(true) -> !model.bool -> negate_value',
      'int(7) -> model.n:text -> n',
    ]);
    assert.deepEqual(model, { bool: false, n: '7' });
    assert.deepEqual(body, { negate_value: false, n: '7' });
  });
});

describe('input mapping: null rules', () => {
  it('a stored null is written as null; a missing source leaves a body key unset and removes a model key', () => {
    const { body, model } = runInput(
      [
        'input.body.nothing -> nul',
        'input.body.absent -> absent',
        'input.body.nothing -> model.n',
        'input.body.absent -> model.gone',
        'model.none -> model.cleared',
      ],
      { input: httpInput, model: { gone: 1, cleared: 2 } },
    );
    assert.deepEqual(body, { nul: null });
    assert.deepEqual(model, { n: null });
  });
});

describe('input mapping: runtime substitution and dynamic indexes', () => {
  it('replaces {model.k} in keys and constants; other braces stay', () => {
    const { body } = runInput(
      [
        'text(hello {model.name}) -> greeting',
        'text(x) -> key_{model.n}',
        'text(keep {this}/{ one } unchanged) -> literal',
        'text({model.map}) -> not_text',
      ],
      { model: { name: 'Ann', n: 3, map: { a: 1 } } },
    );
    assert.deepEqual(body, {
      greeting: 'hello Ann',
      key_3: 'x',
      literal: 'keep {this}/{ one } unchanged',
      not_text: 'null',
    });
  });

  it('resolves [model.n] on both sides', () => {
    const { body, model } = runInput(['input.body.list[model.n].w -> w', 'text(v) -> model.slots[model.n]'], {
      input: httpInput,
      model: { n: 1 },
    });
    assert.deepEqual(body, { w: '2' });
    assert.deepEqual(model['slots'], [null, 'v']);
  });

  it('refuses negative, too large and reserved dynamic targets with 400', () => {
    assert.throws(
      () => runInput(['text(v) -> model.a[model.n]'], { model: { n: -2 } }),
      rejectsWith(400, 'Cannot set RHS to negative index - model.a[model.n]'),
    );
    assert.throws(
      () => runInput(['text(v) -> list[-1]']),
      rejectsWith(400, 'Cannot set RHS to negative index - list[-1]'),
    );
    assert.throws(
      () => runInput(['text(v) -> model.a[model.n]'], { model: { n: 1001 } }),
      rejectsWith(400, 'Cannot set RHS to index > 1001 that exceeds max 1000 - model.a[model.n]'),
    );
    assert.throws(
      () => runInput(['text(x) -> model.{model.pointer}'], { model: { pointer: 'none' } }),
      rejectsWith(
        400,
        "Cannot set RHS to the reserved state-machine key 'model.none' - model.{model.pointer}",
      ),
    );
  });
});
