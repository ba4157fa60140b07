/**
 * One flow file (already parsed YAML, `${...}` resolved) → an immutable CompiledFlow, with the rules
 * and messages of Mercury's CompileFlows, in its order. A broken flow-level rule throws
 * FlowValidationError (the loader logs `Unable to parse {file} - {message}` and skips the flow); a
 * task with a bad mapping, or a decision task with fewer than 2 next tasks, is left out and reported
 * through `dropTask`, as Mercury drops it and loads the rest.
 */
import { compileMapping } from '../mapping/compile-mapping.ts';
import type { CompiledMapping, MappingKind } from '../mapping/compiled-mapping.ts';
import { type DataMap, getPath, isDataMap } from '../mapping/data-path.ts';
import { durationSeconds, isNumeric, javaText, splitOn, str2long } from '../mapping/java-text.ts';
import {
  type CompiledFlow,
  type CompiledTask,
  EXECUTION_TYPES,
  type ExecutionType,
} from './compiled-flow.ts';
import { FlowValidationError } from './flow-validation-error.ts';
import { parseLoop } from './loop-statement.ts';

export interface CompileFlowOptions {
  /** True when a flow with this id is already loaded (Mercury keeps the first). */
  readonly isLoaded?: (id: string) => boolean;
  /** A task left out of the flow, with Mercury's ERROR text. */
  readonly dropTask?: (message: string, task: string) => void;
  /** Mercury's WARN lines (deprecated syntax, input namespace on the right). */
  readonly warn?: (message: string) => void;
}

const FLOW_PROTOCOL = 'flow://';

/** Mercury's ConfigReader.get: the raw value at a dotted path. */
function get(doc: DataMap, key: string): unknown {
  return getPath(doc, key);
}

/** Mercury's ConfigReader.getProperty: the value as text, or undefined. */
function text(doc: DataMap, key: string): string | undefined {
  const v = getPath(doc, key);
  return v === null || v === undefined ? undefined : javaText(v);
}

/** TTL in ms from a duration text: at least one second (Mercury's rule for flow.ttl). */
export function flowTtlMs(ttl: string): number {
  return Math.max(1, durationSeconds(ttl)) * 1000;
}

export function compileFlow(doc: DataMap, file: string, options: CompileFlowOptions = {}): CompiledFlow {
  const id = get(doc, 'flow.id');
  const description = get(doc, 'flow.description');
  const ttl = get(doc, 'flow.ttl');
  const firstTask = get(doc, 'first.task');
  const headerOk = typeof id === 'string' && typeof description === 'string' && typeof ttl === 'string';
  if (!headerOk || typeof firstTask !== 'string') {
    throw new FlowValidationError('check flow.id, flow.description, flow.ttl, first.task');
  }
  if (options.isLoaded?.(id)) throw new FlowValidationError(`Flow '${id}' already exists`, { flow: id });
  const ttlMs = flowTtlMs(ttl);
  const exception = get(doc, 'flow.exception');
  const ext = get(doc, 'external.state.machine');
  const taskList = get(doc, 'tasks');
  if (!Array.isArray(taskList) || taskList.length === 0) {
    throw new FlowValidationError("'tasks' section is empty or invalid", { flow: id });
  }
  const context: FlowContext = { id, file, ttlMs, options };
  const tasks = new Map<string, CompiledTask>();
  let endTaskFound = false;
  for (let i = 0; i < taskList.length; i++) {
    const entry = taskList[i];
    const task = compileTask(isDataMap(entry) ? entry : {}, i, context);
    if (task.execution === 'end') endTaskFound = true;
    if (task.compiled !== undefined) tasks.set(task.compiled.name, task.compiled);
  }
  if (!endTaskFound) throw new FlowValidationError('flow must have at least one end task', { flow: id });
  const all = [...tasks.values()].flatMap((t) => [...t.inputMappings, ...t.outputMappings]);
  if (all.some((m) => m.usesExternal) && typeof ext !== 'string') {
    throw new FlowValidationError('flow is missing external.state.machine', { flow: id });
  }
  if (all.some((m) => m.incomplete))
    throw new FlowValidationError('flow has invalid data mappings', { flow: id });
  return Object.freeze({
    id,
    description,
    ttlMs,
    firstTask,
    ...(typeof exception === 'string' ? { exceptionHandler: exception } : {}),
    ...(typeof ext === 'string' ? { externalStateMachine: ext } : {}),
    tasks,
    file,
  });
}

interface FlowContext {
  readonly id: string;
  readonly file: string;
  readonly ttlMs: number;
  readonly options: CompileFlowOptions;
}

type MutableTask = { -readonly [K in keyof CompiledTask]: CompiledTask[K] };

/** One task: `compiled` is undefined when Mercury drops it (its execution type still counts for `end`). */
function compileTask(
  entry: DataMap,
  index: number,
  context: FlowContext,
): { execution: ExecutionType; compiled?: CompiledTask } {
  const name = text(entry, 'name') ?? text(entry, 'process');
  const process = text(entry, 'process');
  const input = get(entry, 'input') ?? [];
  const output = get(entry, 'output') ?? [];
  const description = get(entry, 'description');
  const execution = get(entry, 'execution');
  if (name === undefined || name.trim() === '') {
    throw new FlowValidationError(`task[${index}]. task name must not be empty`, { flow: context.id });
  }
  const where = { flow: context.id, task: name };
  const fail = (message: string): never => {
    throw new FlowValidationError(message, where);
  };
  if (!Array.isArray(input)) fail(`task ${name}. input must be a list`);
  if (!Array.isArray(output)) fail(`task ${name}. output must be a list`);
  if (typeof description !== 'string' || description.trim() === '')
    fail(`task ${name}. description must not be empty`);
  if (typeof execution !== 'string' || execution.trim() === '')
    fail(`task ${name}. execution type must not be empty`);
  const type = execution as ExecutionType;
  if (!EXECUTION_TYPES.includes(type)) {
    fail(`task ${name}. execution type '${type}' must be one of [${EXECUTION_TYPES.join(', ')}]`);
  }
  if (name.includes('://') && !name.startsWith(FLOW_PROTOCOL)) {
    fail(`invalid task name=${name}. Syntax is flow://{flow-name}`);
  }
  if (process?.includes('://') && !process.startsWith(FLOW_PROTOCOL)) {
    fail(`invalid task process=${process}. Syntax is flow://{flow-name}`);
  }
  if (name.startsWith(FLOW_PROTOCOL) && process !== undefined && !process.startsWith(FLOW_PROTOCOL)) {
    fail(`invalid task process=${name}. process tag not allowed when name is a sub-flow`);
  }
  const functionRoute = process ?? name;
  const task: MutableTask = {
    name,
    functionRoute,
    description: description as string,
    execution: type,
    inputMappings: [],
    outputMappings: [],
    next: [],
    pipeline: [],
    loopConditions: [],
  };
  if (functionRoute.startsWith(FLOW_PROTOCOL)) task.subFlow = functionRoute.slice(FLOW_PROTOCOL.length);
  setDelay(task, text(entry, 'delay'), context, fail);
  setTtl(task, text(entry, 'ttl'), context, fail);
  const exception = get(entry, 'exception');
  if (typeof exception === 'string') task.exception = exception;
  if (type !== 'end') {
    if (type === 'fork') setJoin(task, get(entry, 'join'), fail);
    if (type !== 'sink') setNext(task, get(entry, 'next') ?? [], text(entry, 'source'), fail);
    if (type === 'pipeline') setPipeline(task, entry, context.id, fail);
  }
  const compiled = compileMappings(task, input as unknown[], output as unknown[], context);
  return compiled ? { execution: type, compiled: Object.freeze(task) } : { execution: type };
}

type Fail = (message: string) => never;

function setDelay(task: MutableTask, raw: string | undefined, context: FlowContext, fail: Fail): void {
  if (raw === undefined || raw === '') return;
  const delay = raw.endsWith('ms') ? raw.slice(0, -2).trim() : raw;
  if (isNumeric(delay)) {
    const n = Math.max(1, str2long(delay));
    if (n >= context.ttlMs) fail(`invalid task ${task.name}. delay must be less than TTL`);
    task.delayMs = n;
    return;
  }
  if (splitOn(delay, '.').length > 1 && delay.startsWith('model.')) {
    task.delayVar = delay;
    return;
  }
  fail(`invalid task ${task.name}. delay variable must starts with 'model.'`);
}

function setTtl(task: MutableTask, raw: string | undefined, context: FlowContext, fail: Fail): void {
  if (raw === undefined || raw === '') return;
  if (!task.functionRoute.startsWith(FLOW_PROTOCOL)) {
    fail(`invalid task ${task.name}. ttl is only applicable to a sub-flow task`);
  }
  const seconds = durationSeconds(raw);
  if (seconds < 1) fail(`invalid task ${task.name}. ttl must be a positive duration (e.g. 8s)`);
  if (seconds * 1000 >= context.ttlMs) fail(`invalid task ${task.name}. ttl must be less than flow.ttl`);
  task.ttlMs = seconds * 1000;
}

function setJoin(task: MutableTask, join: unknown, fail: Fail): void {
  if (typeof join !== 'string') fail(`invalid task ${task.name}. Missing a join task`);
  task.join = join as string;
}

function setNext(task: MutableTask, next: unknown, source: string | undefined, fail: Fail): void {
  if (!Array.isArray(next)) fail(`invalid task ${task.name}. 'next' should be a list`);
  const steps = (next as unknown[]).map(javaText);
  if (steps.length === 0) fail(`Invalid task ${task.name}. Missing a list of next tasks`);
  if (steps.length > 1 && (task.execution === 'sequential' || task.execution === 'pipeline')) {
    fail(`Invalid ${task.execution} task ${task.name}. Expected one next task, Actual: ${steps.length}`);
  }
  if (source !== undefined && source !== '') {
    if (steps.length > 1) {
      fail(
        `Invalid ${task.execution} task ${task.name}. Expected one next task if dynamic model source is used, Actual: ${steps.length}`,
      );
    }
    if (!source.startsWith('model.') || source.endsWith('.')) {
      fail(
        `Invalid ${task.execution} task ${task.name}. Source must start with model namespace, Actual: ${source}`,
      );
    }
    task.source = source;
  }
  task.next = Object.freeze(steps);
}

function setPipeline(task: MutableTask, entry: DataMap, flow: string, fail: Fail): void {
  const steps = get(entry, 'pipeline') ?? [];
  if (!Array.isArray(steps)) fail(`invalid task ${task.name}. 'pipeline' should be a list`);
  if ((steps as unknown[]).length === 0) fail(`invalid task ${task.name}. Missing a list of pipeline steps`);
  task.pipeline = Object.freeze((steps as unknown[]).map(javaText));
  const { loop, conditions } = parseLoop(text(entry, 'loop.statement'), get(entry, 'loop.condition'), {
    flow,
    task: task.name,
  });
  if (loop !== undefined) task.loop = loop;
  task.loopConditions = conditions;
}

/** Compiles the task's mapping lines; false when Mercury drops the task. */
function compileMappings(
  task: MutableTask,
  input: unknown[],
  output: unknown[],
  context: FlowContext,
): boolean {
  const inputs = compileLines(task, input, 'input', context);
  if (inputs === undefined) return false;
  const outputs = compileLines(task, output, 'output', context);
  if (outputs === undefined) return false;
  if (task.execution === 'decision' && task.next.length < 2) {
    context.options.dropTask?.(
      `Decision task ${task.name} in ${context.file} must have at least 2 next tasks`,
      task.name,
    );
    return false;
  }
  task.inputMappings = Object.freeze(inputs);
  task.outputMappings = Object.freeze(outputs);
  return true;
}

function compileLines(
  task: MutableTask,
  lines: unknown[],
  kind: MappingKind,
  context: FlowContext,
): CompiledMapping[] | undefined {
  const out: CompiledMapping[] = [];
  for (const line of lines) {
    try {
      const mapping = compileMapping(javaText(line), {
        flow: context.id,
        task: task.name,
        kind,
        file: context.file,
        decisionTask: task.execution === 'decision',
      });
      for (const w of mapping.warnings) context.options.warn?.(w);
      out.push(mapping);
    } catch (e) {
      if (!(e instanceof FlowValidationError)) throw e;
      context.options.dropTask?.(e.message, task.name);
      return undefined;
    }
  }
  return out;
}
