import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AppException } from '@gatehouse/functions';
import { runOutput } from './mapping-harness.ts';

describe('output mapping', () => {
  it('reads result, header, status, the flow input and the model into output.* and the model', () => {
    const run = runOutput(
      [
        'result.greeting -> output.body.text',
        'header.x-trace -> output.header.x-trace',
        'status -> model.status',
        'input.body.id -> output.body.id',
        'result -> model.saved',
        'model.cid -> output.body.cid',
      ],
      {
        result: { greeting: 'hi' },
        header: { 'x-trace': 't1' },
        status: 201,
        input: { body: { id: 7 } },
        model: { cid: 'c1' },
      },
    );
    assert.deepEqual(run.output, { body: { text: 'hi', id: 7, cid: 'c1' }, header: { 'x-trace': 't1' } });
    assert.deepEqual(run.model, { cid: 'c1', status: 201, saved: { greeting: 'hi' } });
  });

  it('output.status takes 100-599 as a number or numeric text; anything else is skipped with a warning', () => {
    const warnings: string[] = [];
    const run = runOutput(['text(201) -> output.status', 'text(20000) -> output.status'], {
      hooks: { warn: (m) => warnings.push(m) },
    });
    assert.deepEqual(run.output, { status: 201 });
    assert.deepEqual(warnings, [
      "Invalid output mapping 'text(20000) -> output.status' - expect: valid HTTP status code, actual: 20000",
    ]);
  });

  it('output.header as a whole must be a map and replaces earlier single headers', () => {
    const warnings: string[] = [];
    const run = runOutput(
      [
        'text(text/plain) -> output.header.content-type',
        'result.headers -> output.header',
        'text(x) -> output.header.after',
        'result.text -> output.header',
      ],
      { result: { headers: { a: '1' }, text: 'no map' }, hooks: { warn: (m) => warnings.push(m) } },
    );
    assert.deepEqual(run.output, { header: { a: '1', after: 'x' } });
    assert.deepEqual(warnings, [
      "Invalid output mapping 'result.text -> output.header' - expect: Map, actual: String",
    ]);
  });

  it('maps decision on a decision task; the runner gets the value once, after the lines', () => {
    const run = runOutput(['result.ok -> decision'], { result: { ok: false }, decisionTask: true });
    assert.deepEqual([run.decided, run.decision], [true, false]);
    const none = runOutput(['result.ok -> model.ok'], { result: { ok: true }, decisionTask: true });
    assert.equal(none.decided, false);
  });

  it('null rules: a stored null sets null, a missing source removes the target', () => {
    const run = runOutput(
      ['result.nul -> output.body.nul', 'result.absent -> model.gone', 'model.none -> output.body.none'],
      {
        result: { nul: null },
        model: { gone: 1 },
      },
    );
    assert.deepEqual(run.output, { body: { nul: null } });
    assert.deepEqual(run.model, {});
  });

  it('writes, appends and deletes files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'flows-out-'));
    const file = join(dir, 'sub', 'out.txt');
    runOutput(
      [
        `result.text -> file(${file})`,
        `text(+more) -> file(append:${file})`,
        `result.map -> file(${dir}/m.json)`,
      ],
      {
        result: { text: 'hello', map: { a: [1] } },
        hooks: { fileFolders: [dir] },
      },
    );
    assert.equal(readFileSync(file, 'utf8'), 'hello+more');
    assert.equal(readFileSync(join(dir, 'm.json'), 'utf8'), '{"a":[1]}');
    runOutput([`model.none -> file(${file})`], { hooks: { fileFolders: [dir] } });
    assert.equal(existsSync(file), false);
  });

  it('writes no file outside its folders: 400 when the model built the path, 500 when the line did', () => {
    const dir = mkdtempSync(join(tmpdir(), 'flows-out-'));
    const allowed = join(dir, 'allowed');
    const status = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        if (err instanceof AppException) return [err.status, err.message];
      }
      return undefined;
    };
    const hooks = { fileFolders: [allowed] };
    const built = `result.text -> file(${allowed}/{model.name})`;
    assert.deepEqual(
      status(() => runOutput([built], { result: { text: 'x' }, model: { name: '../escaped.txt' }, hooks })),
      [400, `File path ${allowed}/../escaped.txt is outside flow.file.folders`],
    );
    assert.equal(existsSync(join(dir, 'escaped.txt')), false);
    assert.equal(
      status(() =>
        runOutput([`result.text -> file(${dir}/fixed.txt)`], { result: { text: 'x' }, hooks }),
      )?.[0],
      500,
    );
    assert.equal(
      status(() => runOutput([`result.text -> file(${allowed}/a.txt)`], { result: { text: 'x' } }))?.[0],
      500,
      'no folders: no file(...)',
    );
    runOutput([built], { result: { text: 'kept' }, model: { name: 'in/side.txt' }, hooks });
    assert.equal(readFileSync(join(allowed, 'in/side.txt'), 'utf8'), 'kept');
  });

  it('sends ext: values and removals', () => {
    const calls: [string, unknown][] = [];
    runOutput(['result -> ext:k1', 'result.none -> ext:k2'], {
      result: { v: 1 },
      hooks: { external: (k, v) => calls.push([k, v]) },
    });
    assert.deepEqual(calls, [
      ['k1', { v: 1 }],
      ['k2', null],
    ]);
  });

  it('an unknown plugin fails at run time with 400', () => {
    assert.throws(
      () => runOutput(['f:nosuch(result) -> output.body']),
      (e: unknown) =>
        e instanceof AppException &&
        e.status === 400 &&
        e.message === 'Unable to process SimplePlugin: f:nosuch(result)',
    );
  });
});
