/**
 * The registry's instance limit: a function with `instances: 1` (Mercury's singleton, such as an
 * external state machine) runs one call at a time, in the order the calls were made, always as
 * instance 1, however the calls interleave with the ones finishing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AsyncHttpRequest, defineFunction } from '@gatehouse/functions';
import { FunctionRegistry } from '../../src/functions/function-registry.ts';

const input = {} as AsyncHttpRequest;

/** A one-instance function that records each call's order, instance and overlap. */
function singleton() {
  const seen: Array<{ n: number; instance: number }> = [];
  let running = 0;
  let overlapped = false;
  const registry = new FunctionRegistry();
  registry.register(
    defineFunction({
      route: 'one.at.a.time',
      instances: 1,
      handleEvent: async (headers, _request, instance) => {
        running++;
        if (running > 1) overlapped = true;
        seen.push({ n: Number(headers['n']), instance });
        await Promise.resolve();
        running--;
        return true;
      },
    }),
    'test',
  );
  return { registry, seen, overlapped: () => overlapped };
}

/** Runs `fn` after `depth` microtask hops, so calls land between a release and its waiter. */
function afterHops(depth: number, fn: () => void): void {
  if (depth === 0) fn();
  else queueMicrotask(() => afterHops(depth - 1, fn));
}

/** A small deterministic generator (the schedules must be the same on every run). */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
}

describe('FunctionRegistry instances', () => {
  it('hands a freed instance to the first waiter: one call at a time, in order, as instance 1', async () => {
    const { registry, seen, overlapped } = singleton();
    const calls: Array<Promise<unknown>> = [];
    const order: number[] = [];
    let n = 0;
    // Calls made at once and calls made while earlier ones finish, at every microtask offset.
    for (let depth = 0; depth < 12; depth++) {
      afterHops(depth, () => {
        for (let k = 0; k < 3; k++) {
          order.push(++n);
          calls.push(registry.invoke('one.at.a.time', { n: String(n) }, input));
        }
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    await Promise.all(calls);
    assert.equal(seen.length, 36);
    assert.equal(overlapped(), false, 'two calls ran at once');
    assert.deepEqual(
      seen.map((s) => s.instance),
      seen.map(() => 1),
    );
    assert.deepEqual(
      seen.map((s) => s.n),
      order,
    );
  });

  it('leaves no call waiting while an instance is free (seeded schedules of calls and durations)', async () => {
    for (let seed = 1; seed <= 50; seed++) {
      const random = seeded(seed);
      const registry = new FunctionRegistry();
      registry.register(
        defineFunction({
          route: 'one.at.a.time',
          instances: 1,
          handleEvent: async () => {
            for (let i = Math.floor(random() * 3); i > 0; i--) await null;
            return true;
          },
        }),
        'test',
      );
      const calls: Array<Promise<unknown>> = [];
      for (let k = 0; k < 8; k++)
        afterHops(Math.floor(random() * 8), () => calls.push(registry.invoke('one.at.a.time', {}, input)));
      await new Promise((resolve) => setImmediate(resolve));
      await Promise.all(calls);
      // Were an instance lost, this call would wait for ever: a flow task until the flow's 408.
      const next = registry.invoke('one.at.a.time', {}, input);
      const stuck = new Promise((resolve) => setTimeout(resolve, 100, 'still waiting'));
      assert.equal(await Promise.race([next, stuck]), true, `seed ${seed}`);
    }
  });

  it('keeps the line when a synchronous call comes while others wait', async () => {
    const { registry, seen } = singleton();
    const first = registry.invoke('one.at.a.time', { n: '1' }, input);
    const second = registry.invoke('one.at.a.time', { n: '2' }, input);
    await first;
    // `call` (the endpoint's fast path) finds no instance free while `second` waits or runs.
    const third = registry.call('one.at.a.time', { n: '3' }, input);
    await Promise.all([second, third]);
    assert.deepEqual(
      seen.map((s) => s.n),
      [1, 2, 3],
    );
  });
});
