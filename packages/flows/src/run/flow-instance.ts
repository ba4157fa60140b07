/**
 * One run of a compiled flow: its input, its model (state machine) and the bookkeeping of forks,
 * pipelines, delayed dispatches and the deadline. Each task goes through the same cycle: input
 * mapping → optional delay → its function (or sub-flow) → output mapping, or the exception path →
 * the next step chosen by its execution type (or by the fork / pipeline it runs in). The first
 * `response`, `end` or abort answers the caller; `end` and aborts close the instance, after which
 * late completions are ignored. Mappings never await, so concurrent branches cannot interleave
 * inside one (Mercury runs them under a lock).
 */
import { isAppException, isThenable } from '@gatehouse/functions';
import type { CompiledFlow, CompiledTask } from '../compile/compiled-flow.ts';
import { applyMappings } from '../mapping/apply-mappings.ts';
import type { MappingScope } from '../mapping/compiled-mapping.ts';
import type { MappingHooks } from '../mapping/mapping-hooks.ts';
import { readModelKey } from '../mapping/model-key.ts';
import { decisionIndex, decisionText, integerOf, parseRetry } from './decision.ts';
import { eventHeadersOf } from './event-headers.ts';
import { outcomeOfError, outcomeOfResult, type TaskOutcome } from './flow-functions.ts';
import type { FlowResult } from './flow-result.ts';
import { responseOf } from './flow-result.ts';
import type { FlowTrace, TaskStep } from './flow-trace.ts';
import type { InstanceHost, InstanceView } from './instance-host.ts';
import { newInstanceId } from './instance-id.ts';
import { enterLoop, firedCondition, nextRound } from './pipeline-loop.ts';

export interface InstanceOptions {
  /** Business correlation id (`model.cid`, `my_correlation_id` of every task). */
  cid: string;
  /** The instance's deadline in ms. */
  ttlMs: number;
  trace?: FlowTrace;
  /** The trace step the flow runs under (the adapter's, or the parent flow's sub-flow task). */
  parentStep?: TaskStep;
  /** The root flow's shared map (`model.parent` = `model.root`); a new one for a root flow. */
  root?: Record<string, unknown>;
}

/** Where a task runs: in a fork branch, a pipeline step, or as a handler of a failure. */
interface RunContext {
  forkId?: number;
  pipelineId?: number;
  forkItem?: { source: string; item: unknown; index: number };
  /** Handler runs: the `error.*` dataset and the task that failed (for `@retry`). */
  error?: Record<string, unknown>;
  failedTask?: string;
}

interface Fork {
  remaining: number;
  join: string;
}

interface Pipeline {
  task: CompiledTask;
  index: number;
}

const plain: RunContext = Object.freeze({});

export class FlowInstance implements InstanceView {
  readonly id = newInstanceId();
  readonly model: Record<string, unknown>;
  private readonly flow: CompiledFlow;
  private readonly input: unknown;
  private readonly runner: InstanceHost;
  private readonly o: InstanceOptions;
  private readonly hooks: MappingHooks;
  private readonly settle: (result: FlowResult) => void;
  private readonly startedAt = performance.now();
  // Made when first needed: most instances never delay a task, fork or run a pipeline.
  private timers: Set<NodeJS.Timeout> | undefined;
  private forks: Map<number, Fork> | undefined;
  private pipelines: Map<number, Pipeline> | undefined;
  private readonly spent: Array<{ name: string; spent: number }> = [];
  private deadline: NodeJS.Timeout | undefined;
  /** The trace step of this instance (traced requests only). */
  private flowStep: TaskStep | undefined;
  private seq = 0;
  private responded = false;
  private closed = false;
  /** Set while the flow-level handler deals with a failure: a further failure aborts (loop guard). */
  private handlerInProgress = false;

  constructor(
    flow: CompiledFlow,
    input: unknown,
    runner: InstanceHost,
    options: InstanceOptions,
    settle: (result: FlowResult) => void,
  ) {
    this.flow = flow;
    this.input = input;
    this.runner = runner;
    this.o = options;
    this.settle = settle;
    const root = options.root ?? {};
    this.model = {
      instance: this.id,
      cid: options.cid,
      ttl: options.ttlMs,
      flow: flow.id,
      parent: root,
      root,
    };
    if (options.trace) this.model['trace'] = options.trace.id;
    this.hooks = {
      ...runner.mappingHooks,
      external: (key, value) => runner.external(flow, this, key, value),
      warn: (message) => runner.logger.warn({ flow: flow.id, instance: this.id }, message),
    };
  }

  get root(): Record<string, unknown> {
    return this.model['root'] as Record<string, unknown>;
  }

  get cid(): string {
    return this.o.cid;
  }

  get trace(): FlowTrace | undefined {
    return this.o.trace;
  }

  get flowId(): string {
    return this.flow.id;
  }

  get ttlMs(): number {
    return this.o.ttlMs;
  }

  /** The instance's trace step (traced requests): what it starts runs under it. */
  get step(): TaskStep | undefined {
    return this.flowStep;
  }

  start(): void {
    this.flowStep = this.o.trace?.beginFlow(this.flow.id, this.o.parentStep);
    this.runner.completions.step(() => this.run(this.flow.firstTask, plain));
    // A flow whose functions all answered synchronously is over already: no deadline to keep.
    if (this.closed) return;
    const left = this.o.ttlMs - (performance.now() - this.startedAt);
    this.deadline = setTimeout(() => {
      this.runner.logger.warn({ flow: this.flow.id, instance: this.id }, `Flow ${this.label} expired`);
      this.abort(408, `Flow timeout for ${this.o.ttlMs} ms`);
    }, left);
  }

  private get label(): string {
    return `${this.flow.id}:${this.id}`;
  }

  /** Input mapping, then the dispatch (now, or after the task's delay). */
  private run(name: string, ctx: RunContext): void {
    if (this.closed) return;
    const task = this.flow.tasks.get(name);
    if (!task) {
      this.runner.logger.error(
        { flow: this.flow.id },
        `Unable to process flow ${this.label} - missing task '${name}'`,
      );
      this.abort(500, `Service ${name} not defined`);
      return;
    }
    const scope: MappingScope = {
      input: this.input,
      model: this.model,
      error: ctx.error,
      forkItem: ctx.forkItem,
      body: {},
      headers: {},
      output: {},
      hooks: this.hooks,
    };
    try {
      applyMappings(task.inputMappings, scope);
    } catch (err) {
      this.engineError(err);
      return;
    }
    const delay = this.delayOf(task);
    if (delay <= 0) {
      this.dispatch(task, scope.body, scope.headers, ctx);
      return;
    }
    const timer = setTimeout(() => {
      this.timers?.delete(timer);
      this.runner.completions.step(() => this.dispatch(task, scope.body, scope.headers, ctx));
    }, delay);
    this.timers ??= new Set();
    this.timers.add(timer);
  }

  private delayOf(task: CompiledTask): number {
    if (task.delayMs !== undefined) return task.delayMs;
    if (task.delayVar === undefined) return 0;
    const value = readModelKey(this.model, task.delayVar);
    const ms = value === undefined || value === null ? -1 : integerOf(value);
    if (ms > 0 && ms < this.o.ttlMs) return ms;
    this.runner.logger.warn(
      { flow: this.flow.id, instance: this.id },
      `Unable to schedule future task for ${task.name} because ${task.delayVar} is invalid (${decisionText(value)})`,
    );
    return 0;
  }

  private dispatch(
    task: CompiledTask,
    body: unknown,
    headers: Record<string, string>,
    ctx: RunContext,
  ): void {
    if (this.closed) return;
    const trace = this.o.trace;
    const route = task.functionRoute;
    if (task.subFlow === undefined && !this.runner.functions.has(route)) {
      this.abort(400, `Route ${route} not found`);
      return;
    }
    const child = task.subFlow === undefined ? undefined : this.runner.flows.get(task.subFlow);
    if (task.subFlow !== undefined && !child) {
      this.runner.logger.error(
        { flow: this.flow.id },
        `Unable to process flow ${this.label} - missing sub-flow flow://${task.subFlow}`,
      );
      this.abort(500, `flow://${task.subFlow} not defined`);
      return;
    }
    // Spent times go only into a traced flow's summary: untraced tasks do not read the clock.
    const startedAt = this.flowStep === undefined ? 0 : performance.now();
    const step = trace?.beginTask(this.flow.id, task.name, route, this.flowStep);
    const finish = (outcome: TaskOutcome): void => {
      if (this.flowStep !== undefined) {
        const spent = Math.round((performance.now() - startedAt) * 1000) / 1000;
        this.spent.push({ name: task.name === route ? route : `${task.name}(${route})`, spent });
      }
      if (step !== undefined) {
        trace!.endTask(
          step,
          outcome.status,
          outcome.status >= 400 ? textOf(messageOf(outcome.body)) : undefined,
        );
      }
      try {
        this.completed(task, ctx, outcome);
      } catch (err) {
        this.engineError(err);
      }
    };
    const completions = this.runner.completions;
    if (child) {
      const input: Record<string, unknown> = { body, ttl: task.ttlMs ?? this.o.ttlMs };
      if (Object.keys(headers).length > 0) input['header'] = headers;
      this.runner
        .startChild(child, input, this, { ttlMs: task.ttlMs ?? this.o.ttlMs, parentStep: step })
        .then((result) => completions.step(() => finish(outcomeOfChild(result))));
      return;
    }
    let result: unknown;
    try {
      result = this.runner.functions.call(route, eventHeadersOf(route, this.o.cid, trace, headers), body);
    } catch (err) {
      completions.defer(() => finish(outcomeOfError(err)));
      return;
    }
    if (isThenable(result)) {
      Promise.resolve(result)
        .then(outcomeOfResult, outcomeOfError)
        .then((outcome) => completions.step(() => finish(outcome)));
      return;
    }
    completions.defer(() => finish(outcomeOfResult(result)));
  }

  private completed(task: CompiledTask, ctx: RunContext, outcome: TaskOutcome): void {
    if (this.closed) return;
    if (outcome.status >= 400) {
      this.failed(task, ctx, outcome);
      return;
    }
    this.handlerInProgress = false;
    let decision: unknown;
    const scope: MappingScope = {
      input: this.input,
      model: this.model,
      result: outcome.body,
      header: outcome.headers,
      status: outcome.status,
      body: undefined,
      headers: {},
      output: {},
      setDecision: (value) => {
        decision = value;
      },
      hooks: this.hooks,
    };
    applyMappings(task.outputMappings, scope);
    this.proceed(task, ctx, scope.output, decision);
  }

  /** The next step: the fork or pipeline the task ran in decides, else its execution type. */
  private proceed(
    task: CompiledTask,
    ctx: RunContext,
    output: Record<string, unknown>,
    decision: unknown,
  ): void {
    if (ctx.forkId !== undefined) {
      this.branchDone(ctx.forkId);
      return;
    }
    if (ctx.pipelineId !== undefined) {
      this.stepDone(ctx.pipelineId);
      return;
    }
    switch (task.execution) {
      case 'end':
        this.respond(output);
        this.close(false);
        return;
      case 'response':
        this.respond(output);
        this.run(task.next[0]!, plain);
        return;
      case 'sequential':
        this.run(task.next[0]!, plain);
        return;
      case 'decision':
        this.decide(task, ctx, decision);
        return;
      case 'parallel':
        for (const next of task.next) this.run(next, plain);
        return;
      case 'fork':
        this.fork(task);
        return;
      case 'pipeline':
        this.pipeline(task);
        return;
      case 'sink':
        return;
    }
  }

  private decide(task: CompiledTask, ctx: RunContext, value: unknown): void {
    const index = decisionIndex(value, task.next.length);
    if (index === undefined) {
      const text = decisionText(value);
      this.runner.logger.error(
        { flow: this.flow.id },
        `Flow ${this.label} ${task.name} returned invalid decision (${text})`,
      );
      this.abort(500, `Task ${task.name} returned invalid decision (${text})`);
      return;
    }
    const entry = task.next[index]!;
    const { retry, otherwise } = parseRetry(entry);
    if (!retry) this.run(entry, plain);
    else if (ctx.failedTask !== undefined) this.run(ctx.failedTask, plain);
    else if (otherwise !== undefined) this.run(otherwise, plain);
    else this.abort(500, `Task ${task.name} does not have a previous task [@retry]`);
  }

  private fork(task: CompiledTask): void {
    const join = task.join!;
    let branches: RunContext[];
    const names: string[] = [];
    if (task.source !== undefined) {
      const list = readModelKey(this.model, task.source);
      if (!Array.isArray(list)) {
        this.abort(400, `Flow ${this.label} ${task.name} - ${task.source} is not a list`);
        return;
      }
      // Checked before a branch exists: 300,000 items took 1.2 s of event loop and 156 MB.
      if (list.length > this.runner.maxForkWidth) {
        this.abort(
          400,
          `Flow ${this.label} ${task.name} - ${task.source} has ${list.length} items, more than a fork may start (flow.fork.max-width ${this.runner.maxForkWidth})`,
        );
        return;
      }
      branches = list.map((item, index) => ({ forkItem: { source: task.source!, item, index } }));
      for (const _ of list) names.push(task.next[0]!);
    } else {
      branches = task.next.map(() => ({}));
      names.push(...task.next);
    }
    if (branches.length === 0) {
      this.run(join, plain);
      return;
    }
    const forkId = ++this.seq;
    this.forks ??= new Map();
    this.forks.set(forkId, { remaining: branches.length, join });
    branches.forEach((branch, i) => {
      this.run(names[i]!, { ...branch, forkId });
    });
  }

  private branchDone(forkId: number): void {
    const fork = this.forks?.get(forkId);
    if (!fork || --fork.remaining > 0) return;
    this.forks!.delete(forkId);
    this.run(fork.join, plain);
  }

  private pipeline(task: CompiledTask): void {
    if (task.pipeline.length === 0 || (task.loop && !enterLoop(task.loop, this.model))) {
      this.run(task.next[0]!, plain);
      return;
    }
    const pipelineId = ++this.seq;
    this.pipelines ??= new Map();
    this.pipelines.set(pipelineId, { task, index: 0 });
    this.run(task.pipeline[0]!, { pipelineId });
  }

  private stepDone(pipelineId: number): void {
    const p = this.pipelines?.get(pipelineId);
    if (!p) return;
    const steps = p.task.pipeline;
    const last = p.index === steps.length - 1;
    // Conditions are checked after every step but the last one of a multi-step round, with or
    // without a loop statement (Mercury's handlePipeline looks at the task's conditions only).
    const conditions = p.task.loopConditions ?? [];
    if (conditions.length > 0 && (steps.length === 1 || !last)) {
      const fired = firedCondition(conditions, this.model);
      if (fired?.action === 'break') {
        this.pipelineDone(pipelineId, p);
        return;
      }
      if (fired?.action === 'continue') {
        this.roundDone(pipelineId, p);
        return;
      }
    }
    if (!last) {
      p.index++;
      this.run(steps[p.index]!, { pipelineId });
      return;
    }
    this.roundDone(pipelineId, p);
  }

  private roundDone(pipelineId: number, p: Pipeline): void {
    if (p.task.loop && nextRound(p.task.loop, this.model)) {
      p.index = 0;
      this.run(p.task.pipeline[0]!, { pipelineId });
      return;
    }
    this.pipelineDone(pipelineId, p);
  }

  private pipelineDone(pipelineId: number, p: Pipeline): void {
    this.pipelines?.delete(pipelineId);
    this.run(p.task.next[0]!, plain);
  }

  /** A task failed: its handler (task-level, else flow-level) runs with `error.*`, else abort. */
  private failed(task: CompiledTask, ctx: RunContext, outcome: TaskOutcome): void {
    const { message, stack } = errorOf(outcome);
    if (this.handlerInProgress) {
      this.abort(outcome.status, message, stack);
      return;
    }
    const handler = task.exception ?? this.flow.exceptionHandler;
    if (ctx.forkId !== undefined) this.forks?.delete(ctx.forkId);
    if (ctx.pipelineId !== undefined) {
      if (task.exception !== undefined) this.pipelines?.delete(ctx.pipelineId);
      else {
        this.pipelines?.clear();
        this.forks?.clear();
      }
    }
    if (handler === undefined) {
      this.abort(outcome.status, message, stack);
      return;
    }
    if (task.exception === undefined) this.handlerInProgress = true;
    const error: Record<string, unknown> = { task: task.name, code: outcome.status, message };
    if (stack !== undefined) error['stack'] = stack;
    this.run(handler, { error, failedTask: task.name });
  }

  /** An error raised while mapping or dispatching: aborts (AppException → its status, else 500). */
  private engineError(err: unknown): void {
    const status = isAppException(err) ? err.status : 500;
    const message = err instanceof Error ? err.message : String(err);
    this.runner.logger.error(
      { flow: this.flow.id, err },
      `Unable to execute flow ${this.label} - ${message}`,
    );
    this.abort(status, message);
  }

  private respond(output: Record<string, unknown>): void {
    if (this.responded) return;
    this.responded = true;
    this.settle(responseOf(output, (msg) => this.hooks.warn?.(msg)));
  }

  private abort(status: number, message: unknown, stack?: string): void {
    if (!this.responded) {
      this.responded = true;
      const result: FlowResult = { kind: 'abort', status, message };
      if (stack !== undefined) result.stack = stack;
      this.settle(result);
    }
    this.close(true);
  }

  private close(aborted: boolean): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.deadline);
    if (this.timers) for (const timer of this.timers) clearTimeout(timer);
    this.timers?.clear();
    this.forks?.clear();
    this.pipelines?.clear();
    if (this.flowStep === undefined) return;
    this.o.trace!.endFlow(this.flowStep, {
      flow: this.flow.id,
      instance: this.id,
      ms: Math.round((performance.now() - this.startedAt) * 1000) / 1000,
      aborted,
      tasks: this.spent,
    });
  }
}

/** A sub-flow's answer as the outcome of the parent's task. */
function outcomeOfChild(result: FlowResult): TaskOutcome {
  if (result.kind === 'response')
    return { status: result.status, headers: result.headers, body: result.body };
  const outcome: TaskOutcome = { status: result.status, headers: {}, body: result.message };
  if (result.stack !== undefined) outcome.stack = result.stack;
  return outcome;
}

/** `error.message` / `error.stack`: the failure's body as is, a standard error map unwrapped. */
function errorOf(outcome: TaskOutcome): { message: unknown; stack: string | undefined } {
  const body = outcome.body;
  if (isErrorMap(body)) {
    const stack = typeof body['stack'] === 'string' ? body['stack'] : outcome.stack;
    return { message: body['message'], stack };
  }
  return { message: body, stack: outcome.stack };
}

function isErrorMap(body: unknown): body is Record<string, unknown> {
  return (
    typeof body === 'object' &&
    body !== null &&
    (body as Record<string, unknown>)['type'] === 'error' &&
    'message' in body
  );
}

function messageOf(body: unknown): unknown {
  return isErrorMap(body) ? body['message'] : body;
}

function textOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}
