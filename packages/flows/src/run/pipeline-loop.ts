/**
 * The loop of a pipeline task, over the instance's model: `for` initialises its key (after the
 * pipeline task's output mapping), compares before each round and steps after each round's last
 * step; `while` runs a round while its key holds Boolean true. Conditions (`if (model.x) break` /
 * `continue`) fire only on Boolean true; `continue` resets its key to false.
 */
import type { CompiledLoop, LoopCondition, LoopOperand } from '../compile/compiled-flow.ts';
import { readModelKey, writeModelKey } from '../mapping/model-key.ts';
import { integerOf } from './decision.ts';

type Model = Record<string, unknown>;

/** Before the first round: initialise, then whether a round runs at all. */
export function enterLoop(loop: CompiledLoop, model: Model): boolean {
  if (loop.kind === 'for' && loop.init) writeModelKey(model, loop.init.key, loop.init.value);
  return roundAllowed(loop, model);
}

/** After a round's last step: step the counter, then whether another round runs. */
export function nextRound(loop: CompiledLoop, model: Model): boolean {
  if (loop.kind === 'for') {
    const { key, delta } = loop.step;
    writeModelKey(model, key, integerOf(readModelKey(model, key) ?? -1) + delta);
  }
  return roundAllowed(loop, model);
}

/** The first condition that fires after a step, if any (a fired `continue` is reset). */
export function firedCondition(
  conditions: readonly LoopCondition[],
  model: Model,
): LoopCondition | undefined {
  const fired = conditions.find((c) => readModelKey(model, c.key) === true);
  if (fired?.action === 'continue') writeModelKey(model, fired.key, false);
  return fired;
}

function roundAllowed(loop: CompiledLoop, model: Model): boolean {
  if (loop.kind === 'while') return readModelKey(model, loop.key) === true;
  const left = operand(loop.compare.left, model);
  const right = operand(loop.compare.right, model);
  switch (loop.compare.op) {
    case '<':
      return left < right;
    case '<=':
      return left <= right;
    case '>':
      return left > right;
    case '>=':
      return left >= right;
  }
}

function operand(o: LoopOperand, model: Model): number {
  return 'value' in o ? o.value : integerOf(readModelKey(model, o.key) ?? -1);
}
