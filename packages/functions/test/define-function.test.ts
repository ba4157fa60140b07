import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultInstances, defineFunction, isFunctionRegistration } from '../src/index.ts';

describe('defineFunction', () => {
  it('normalises the route name and defaults instances', () => {
    const fn = defineFunction({ route: ' Hello.World ', handleEvent: () => 'hi' });
    assert.equal(fn.route, 'hello.world');
    assert.equal(fn.instances, defaultInstances);
    assert.ok(isFunctionRegistration(fn));
    assert.ok(Object.isFrozen(fn));
  });

  it('rejects bad route names, instances and a missing handler', () => {
    assert.throws(() => defineFunction({ route: 'no spaces', handleEvent: () => 1 }), /invalid route/);
    assert.throws(() => defineFunction({ route: 'a.b', instances: 0, handleEvent: () => 1 }), /positive/);
    assert.throws(
      () => defineFunction({ route: 'a.b', handleEvent: undefined as unknown as () => 1 }),
      /no handleEvent/,
    );
  });

  it('keeps the declared input, unset by default, and refuses an unknown one', () => {
    assert.equal(defineFunction({ route: 'a.b', handleEvent: () => 1 }).input, undefined);
    for (const input of ['http-request', 'envelope', 'map'] as const) {
      assert.equal(defineFunction({ route: 'a.b', input, handleEvent: () => 1 }).input, input);
    }
    assert.throws(
      () => defineFunction({ route: 'a.b', input: 'pojo' as 'map', handleEvent: () => 1 }),
      /input of a\.b must be one of http-request, envelope, map, got pojo/,
    );
  });

  it('is not fooled by a look-alike object', () => {
    assert.ok(!isFunctionRegistration({ route: 'a.b', instances: 1, handleEvent: () => 1 }));
  });
});
