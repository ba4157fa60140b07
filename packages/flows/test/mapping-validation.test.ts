import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileMapping, FlowValidationError, type MappingKind } from '../src/index.ts';

function compileError(line: string, kind: MappingKind, decisionTask = false): string {
  try {
    compileMapping(line, { flow: 'f', task: 'my.task', kind, file: 'my-flow.yml', decisionTask });
  } catch (e) {
    assert.ok(e instanceof FlowValidationError);
    return e.message;
  }
  return 'accepted';
}

const invalidInput = (rule: string) =>
  `Skip invalid task my.task in my-flow.yml that has invalid input mapping - ${rule}`;
const invalidOutput = (rule: string) =>
  `Skip invalid task my.task in my-flow.yml that has invalid output mapping - ${rule}`;

describe('compileMapping: Mercury load-time rules', () => {
  it('refuses invalid input lines with the task-drop message', () => {
    assert.equal(
      compileError('output.something -> something', 'input'),
      invalidInput('output.something -> something'),
    );
    assert.equal(compileError('text(hello) -> model', 'input'), invalidInput('text(hello) -> model'));
    assert.equal(compileError('model.parent -> x', 'input'), invalidInput('model.parent -> x'));
    assert.equal(compileError('map(k1=v1, k1=v2) -> map', 'input'), invalidInput('map(k1=v1, k1=v2) -> map'));
    assert.equal(compileError('f:nosuch(model.a) -> x', 'input'), invalidInput('f:nosuch(model.a) -> x'));
    assert.equal(compileError('model.a -> f:text(x)', 'input'), invalidInput('model.a -> f:text(x)'));
    assert.equal(compileError('result.a -> x', 'input'), invalidInput('result.a -> x'));
    assert.equal(compileError('model.a -> model.a', 'input'), invalidInput('model.a -> model.a'));
    assert.equal(
      compileError('no arrow here', 'input'),
      invalidInput('Syntax must be (LHS -> RHS) or (LHS -> model.variable -> RHS)'),
    );
    assert.equal(
      compileError('a -> b -> c -> d', 'input'),
      invalidInput('Syntax must be (LHS -> RHS) or (LHS -> model.variable -> RHS)'),
    );
    assert.equal(
      compileError('a -> b -> c', 'input'),
      invalidInput('3-part data mapping must have model variable as the middle part'),
    );
  });

  it('refuses invalid output lines with the task-drop message', () => {
    assert.equal(
      compileError('output.something -> something', 'output'),
      invalidOutput('output.something -> something'),
    );
    assert.equal(compileError('result -> body', 'output'), invalidOutput('result -> body'));
    assert.equal(compileError('result -> decision', 'output'), invalidOutput('result -> decision'));
    assert.equal(
      compileError('error.code -> output.status', 'output'),
      invalidOutput('error.code -> output.status'),
    );
    assert.equal(compileError('result -> decision', 'output', true), 'accepted');
    assert.equal(compileError('f:nosuch(result) -> output.body', 'output'), 'accepted');
  });

  it('refuses writes to the reserved model keys, also beneath them', () => {
    const reserved = (kind: MappingKind, key: string, rule: string) =>
      `Skip invalid task (${kind}) my.task in my-flow.yml that overwrites the reserved state-machine key '${key}' - ${rule}`;
    assert.equal(
      compileError('result.user -> model.cid', 'output'),
      reserved('output', 'model.cid', 'result.user -> model.cid'),
    );
    assert.equal(
      compileError('text(x) -> model.instance', 'input'),
      reserved('input', 'model.instance', 'text(x) -> model.instance'),
    );
    assert.equal(
      compileError('text(x) -> model.cid.x', 'input'),
      reserved('input', 'model.cid', 'text(x) -> model.cid.x'),
    );
    assert.equal(
      compileError('text(x) -> model.ttl[0]', 'input'),
      reserved('input', 'model.ttl', 'text(x) -> model.ttl[0]'),
    );
    for (const key of ['model.flow', 'model.trace', 'model.none', 'model.run']) {
      assert.equal(compileError(`text(x) -> ${key}`, 'input'), reserved('input', key, `text(x) -> ${key}`));
    }
    assert.equal(compileError('text(x) -> model.parent.x', 'input'), 'accepted');
    assert.equal(compileError('text(x) -> model.cidx', 'input'), 'accepted');
  });

  it('reports deprecated syntax and input-namespace targets as warnings, and flags ext: and incomplete lines', () => {
    const m = compileMapping('model.a:int -> input.x', {
      flow: 'f',
      task: 't',
      kind: 'input',
      file: 'f.yml',
    });
    assert.deepEqual(m.warnings, [
      "Deprecated input syntax in task t of f.yml - 'model.a:int -> input.x' converted to 'f:int(model.a) -> input.x'",
      'Task t in f.yml uses input namespace in right-hand-side - f:int(model.a) -> input.x',
    ]);
    assert.equal(compileMapping('model.a -> ext:key', { flow: 'f', kind: 'input' }).usesExternal, true);
    assert.equal(compileMapping('model.a -> ext:', { flow: 'f', kind: 'input' }).usesExternal, false);
    assert.equal(compileMapping('input.body. -> x', { flow: 'f', kind: 'input' }).incomplete, true);
    assert.equal(compileMapping('input.body -> model.x:', { flow: 'f', kind: 'input' }).incomplete, true);
    assert.equal(compileMapping('input.body -> model.x', { flow: 'f', kind: 'input' }).incomplete, false);
    assert.equal(compileMapping('model.parent.x -> y', { flow: 'f', kind: 'input' }).touchesParent, true);
  });

  it('keeps a compiled mapping immutable', () => {
    const m = compileMapping('input.body -> body', { flow: 'f', kind: 'input' });
    assert.ok(Object.isFrozen(m) && Object.isFrozen(m.rules) && Object.isFrozen(m.rules[0]));
  });
});
