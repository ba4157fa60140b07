/**
 * A pipeline task's `loop.statement` (`for (...)` / `while (...)`) and `loop.condition`
 * (`if (model.x) break|continue`), parsed and checked with Mercury's rules and messages
 * (CompileFlows.handleLoopStatementIfAny / handleLoopConditions).
 */
import { isNumeric, splitOn } from '../mapping/java-text.ts';
import type { CompiledLoop, LoopCondition, LoopOperand } from './compiled-flow.ts';
import { FlowValidationError } from './flow-validation-error.ts';

const EXAMPLE = "e.g. 'for (model.n = 0; model.n < 3; model.n++)'";

interface Where {
  readonly flow: string;
  readonly task: string;
}

function fail(where: Where, rule: string): never {
  throw new FlowValidationError(`invalid task ${where.task}. ${rule}`, where);
}

/**
 * The loop of a pipeline task (undefined without `loop.statement`) and its conditions; Mercury
 * checks the statement first, and applies the conditions also to a pipeline without a loop.
 */
export function parseLoop(
  statement: string | undefined,
  condition: unknown,
  where: Where,
): { loop: CompiledLoop | undefined; conditions: LoopCondition[] } {
  const conditions: LoopCondition[] = [];
  const loop = statement === undefined ? undefined : parseStatement(statement, conditions, where);
  conditions.push(...parseConditions(condition, where));
  return { loop, conditions };
}

/** `conditions` is filled after the statement is checked (the loop shares the array). */
function parseStatement(statement: string, conditions: LoopCondition[], where: Where): CompiledLoop {
  const bracket = statement.indexOf('(');
  if (bracket === -1) fail(where, 'Please check loop.statement');
  const type = statement.slice(0, bracket).trim();
  if (type !== 'for' && type !== 'while') fail(where, "loop.statement must be 'for' or 'while'");
  const parts = splitOn(statement.slice(bracket + 1), '(;)');
  return type === 'for' ? parseFor(parts, conditions, where) : parseWhile(parts, conditions, where);
}

function parseWhile(parts: string[], conditions: LoopCondition[], where: Where): CompiledLoop {
  if (parts.length !== 1) fail(where, "'while' loop should have only one value");
  const key = parts[0]!.trim();
  if (!key.startsWith('model.') || key.includes('=') || key.includes(' ')) {
    fail(where, "'while' should use a model key");
  }
  return { kind: 'while', key, conditions };
}

function parseFor(parts: string[], conditions: LoopCondition[], where: Where): CompiledLoop {
  if (parts.length < 2 || parts.length > 3) fail(where, "'for' loop should have 2 or 3 segments");
  let init: { key: string; value: number } | undefined;
  if (parts.length === 3) {
    init = parseInitializer(parts[0]!);
    if (init === undefined) fail(where, `check for-loop initializer. ${EXAMPLE}`);
  }
  const compare = parseComparator(parts[parts.length - 2]!);
  const step = parseSequencer(parts[parts.length - 1]!);
  if (compare === undefined || step === undefined) fail(where, `check for-loop syntax. ${EXAMPLE}`);
  const keys = [compare.left, compare.right].flatMap((o) => ('key' in o ? [o.key] : []));
  const validKeys = keys.length > 0 && !(keys.length === 2 && keys[0] === keys[1]) && keys.includes(step.key);
  if (!validKeys) fail(where, "'for' loop has invalid comparator or sequencer");
  return init === undefined
    ? { kind: 'for', compare, step, conditions }
    : { kind: 'for', init, compare, step, conditions };
}

/** `model.n = 0` */
function parseInitializer(text: string): { key: string; value: number } | undefined {
  const parts = splitOn(text.replaceAll('=', ' = '), ' ');
  if (parts.length === 3 && parts[0]!.startsWith('model.') && parts[1] === '=' && isNumeric(parts[2]!)) {
    return { key: parts[0]!, value: Number.parseInt(parts[2]!, 10) };
  }
  return undefined;
}

/** `model.n < 3` (only the first operator kind found is spaced out, as Mercury does). */
function parseComparator(text: string) {
  let s = text;
  for (const op of ['>=', '<=', '<', '>']) {
    if (s.includes(op)) {
      s = s.replaceAll(op, ` ${op} `);
      break;
    }
  }
  const parts = splitOn(s, ' ');
  if (parts.length !== 3) return undefined;
  const [a, op, b] = parts as [string, string, string];
  const left = operand(a);
  const right = operand(b);
  if (left === undefined || right === undefined) return undefined;
  if (op !== '<' && op !== '<=' && op !== '>' && op !== '>=') return undefined;
  return { left, op, right } as const;
}

function operand(text: string): LoopOperand | undefined {
  if (text.startsWith('model.')) return { key: text };
  if (isNumeric(text)) return { value: Number.parseInt(text, 10) };
  return undefined;
}

/** `model.n++`, `++model.n`, `model.n--`, `--model.n` */
function parseSequencer(text: string): { key: string; delta: 1 | -1 } | undefined {
  const s = text.trim();
  let delta: 1 | -1;
  if (s.endsWith('++') || s.startsWith('++')) delta = 1;
  else if (s.endsWith('--') || s.startsWith('--')) delta = -1;
  else return undefined;
  if ((s.startsWith('+') || s.startsWith('-')) && (s.endsWith('+') || s.endsWith('-'))) return undefined;
  const key = s.replaceAll('+', ' ').replaceAll('-', ' ').trim();
  return key.startsWith('model.') ? { key, delta } : undefined;
}

function parseConditions(condition: unknown, where: Where): LoopCondition[] {
  if (typeof condition === 'string') {
    const one = parseCondition(condition);
    if (one === undefined) fail(where, `loop condition syntax error - ${condition}`);
    return [one];
  }
  if (Array.isArray(condition)) {
    return condition.map((c) => {
      const one = parseCondition(String(c));
      if (one === undefined) fail(where, `loop conditions syntax error - [${condition.join(', ')}]`);
      return one;
    });
  }
  return [];
}

/** `if (model.x) break` / `if (model.x) continue` */
function parseCondition(statement: string): LoopCondition | undefined {
  const parts = splitOn(statement, ' ()');
  if (parts.length === 3 && parts[0] === 'if' && parts[1]!.startsWith('model.')) {
    if (parts[2] === 'break' || parts[2] === 'continue') return { key: parts[1]!, action: parts[2] };
  }
  return undefined;
}
