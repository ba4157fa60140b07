/**
 * Runs flow instances over compiled flows and a host's functions. `run(flowId, input, options)`
 * starts a root instance and resolves with its answer (FlowResult) — never rejects: an unknown
 * flow, a timeout or an unhandled failure come back as an abort with Mercury's status and message.
 * Sub-flows (`flow://id` tasks) and `ext:` targets of the external state machine go through here.
 */
import type { CompiledFlow } from '../compile/compiled-flow.ts';
import type { MappingHooks } from '../mapping/mapping-hooks.ts';
import { isThenable } from '@gatehouse/functions';
import { CompletionQueue } from './completion-queue.ts';
import { eventHeadersOf } from './event-headers.ts';
import type { FlowFunctions } from './flow-functions.ts';
import { FlowInstance } from './flow-instance.ts';
import type { FlowResult } from './flow-result.ts';
import type { FlowLogger, FlowTrace, TaskStep } from './flow-trace.ts';
import type { FlowSource, InstanceHost, InstanceView } from './instance-host.ts';

export type { FlowSource } from './instance-host.ts';

export interface FlowRunnerOptions {
  flows: FlowSource;
  functions: FlowFunctions;
  logger: FlowLogger;
  /** `map(config.key)`, `f:setConfig` and `classpath(...)` of the mapping language. */
  config?: MappingHooks['config'];
  resourceFolder?: string;
  /** The folders `file(...)` may read and write; none: file(...) is refused. */
  fileFolders?: readonly string[];
  /** Most branches a dynamic fork may start; a longer list aborts the instance (400). Default 1000. */
  maxForkWidth?: number;
}

/** The default bound of a dynamic fork: one list item is one branch, its tasks and its trace steps. */
export const defaultMaxForkWidth = 1000;

export interface RunOptions {
  /** Business correlation id, `model.cid`. */
  cid: string;
  /** The instance's deadline in ms; the flow's `ttl` when not given. */
  ttlMs?: number;
  /** Traced requests: the host's trace, and the step the flow runs under. */
  trace?: FlowTrace;
  parentStep?: TaskStep;
}

export class FlowRunner implements InstanceHost {
  readonly flows: FlowSource;
  readonly functions: FlowFunctions;
  readonly logger: FlowLogger;
  readonly mappingHooks: MappingHooks;
  readonly completions: CompletionQueue;
  readonly maxForkWidth: number;

  constructor(options: FlowRunnerOptions) {
    this.maxForkWidth = options.maxForkWidth ?? defaultMaxForkWidth;
    this.flows = options.flows;
    this.functions = options.functions;
    this.logger = options.logger;
    this.completions = new CompletionQueue((err) =>
      this.logger.error({ err }, 'Flow engine step failed outside its instance'),
    );
    this.mappingHooks = {
      ...(options.config && { config: options.config }),
      ...(options.resourceFolder !== undefined && { resourceFolder: options.resourceFolder }),
      fileFolders: options.fileFolders ?? [],
    };
  }

  run(flowId: string, input: unknown, options: RunOptions): Promise<FlowResult> {
    return Promise.resolve(this.runEager(flowId, input, options));
  }

  /**
   * `run`, with the answer itself (no promise) when the flow answered before `runEager` returns —
   * every task up to its answer had a function that answered synchronously — so a host may answer
   * at once, as it does for such a function.
   */
  runEager(flowId: string, input: unknown, options: RunOptions): FlowResult | Promise<FlowResult> {
    const flow = this.flows.get(flowId);
    if (!flow) return { kind: 'abort', status: 500, message: `Flow ${flowId} not found` };
    return this.start(flow, input, { ...options, ttlMs: options.ttlMs ?? flow.ttlMs });
  }

  /** A sub-flow of `parent`: same correlation id, trace and shared root map. */
  startChild(
    flow: CompiledFlow,
    input: unknown,
    parent: InstanceView,
    options: { ttlMs: number; parentStep: TaskStep | undefined },
  ): Promise<FlowResult> {
    const trace = parent.trace;
    const started = this.start(
      flow,
      input,
      {
        cid: parent.cid,
        ttlMs: options.ttlMs,
        ...(trace ? { trace } : {}),
        ...(options.parentStep !== undefined ? { parentStep: options.parentStep } : {}),
        root: parent.root,
      },
      parent,
    );
    return Promise.resolve(started);
  }

  /**
   * An `ext:<key>` target: fire-and-forget to the flow's external state machine, a function
   * (headers `type: put|remove` and `key`, body `{data}`) or a flow (`input.header.type/key`,
   * `input.body.data`), with the instance's trace as Mercury sends it. A flow runs as a child of
   * the instance (Mercury's `parent`): same root map, under the instance's trace step.
   */
  external(flow: CompiledFlow, from: InstanceView, key: string, value: unknown): void {
    const target = flow.externalStateMachine;
    if (target === undefined) return;
    const type = value === null || value === undefined ? 'remove' : 'put';
    const body = type === 'put' ? { data: value } : {};
    if (target.startsWith('flow://')) {
      const id = target.slice('flow://'.length);
      const machine = this.flows.get(id);
      if (!machine) {
        this.logger.error(
          { flow: flow.id },
          `Unable to process flow ${flow.id}:${from.id} - missing sub-flow ${target}`,
        );
        return;
      }
      const input = { header: { key, type }, body };
      void this.startChild(machine, input, from, { ttlMs: machine.ttlMs, parentStep: from.step }).then(
        (result) => {
          if (result.kind !== 'abort') return;
          const { status, message } = result;
          this.logger.warn(
            { flow: flow.id, route: target, status, message },
            `External state machine ${target} failed`,
          );
        },
      );
      return;
    }
    const headers = eventHeadersOf(target, from.cid, from.trace, { type, key });
    const failed = (err: unknown): void => {
      this.logger.warn({ flow: flow.id, err, route: target }, `External state machine ${target} failed`);
    };
    try {
      const sent = this.functions.call(target, headers, body);
      if (isThenable(sent)) Promise.resolve(sent).catch(failed);
    } catch (err) {
      failed(err);
    }
  }

  /** Starts an instance: its answer, or a promise of it when the answer is not there yet. */
  private start(
    flow: CompiledFlow,
    input: unknown,
    options: RunOptions & { ttlMs: number; root?: Record<string, unknown> },
    parent?: InstanceView,
  ): FlowResult | Promise<FlowResult> {
    let answer: FlowResult | undefined;
    let resolveLater: ((result: FlowResult) => void) | undefined;
    const instance = new FlowInstance(flow, input, this, options, (result) => {
      if (resolveLater) resolveLater(result);
      else answer = result;
    });
    if (parent)
      this.logger.info({ flow: flow.id }, `${flow.id}:${instance.id} extends ${parent.flowId}:${parent.id}`);
    instance.start();
    if (answer !== undefined) return answer;
    return new Promise((resolve) => {
      resolveLater = resolve;
    });
  }
}
