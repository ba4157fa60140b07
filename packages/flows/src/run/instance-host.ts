/**
 * What a flow instance needs from the runner that started it: the flows and functions it calls,
 * the logger, the mapping hooks, and the two things that start other instances (a sub-flow, an
 * `ext:` key-value). The instance knows only this shape, and the runner implements it, so the
 * runner may create instances without the two files importing each other.
 */
import type { CompiledFlow } from '../compile/compiled-flow.ts';
import type { MappingHooks } from '../mapping/mapping-hooks.ts';
import type { CompletionQueue } from './completion-queue.ts';
import type { FlowFunctions } from './flow-functions.ts';
import type { FlowResult } from './flow-result.ts';
import type { FlowLogger, FlowTrace, TaskStep } from './flow-trace.ts';

/** The flows that loaded (invalid ones are absent). */
export interface FlowSource {
  get(id: string): CompiledFlow | undefined;
}

/** A running instance as the host sees it, when it starts a child or an `ext:` call for it. */
export interface InstanceView {
  readonly id: string;
  readonly flowId: string;
  readonly cid: string;
  readonly trace: FlowTrace | undefined;
  /** The instance's trace step (traced requests): what it starts runs under it. */
  readonly step: TaskStep | undefined;
  /** The root flow's shared map (`model.root`). */
  readonly root: Record<string, unknown>;
}

export interface InstanceHost {
  readonly flows: FlowSource;
  readonly functions: FlowFunctions;
  readonly logger: FlowLogger;
  readonly mappingHooks: MappingHooks;
  /** Where the instances' engine steps run and their synchronous task completions wait. */
  readonly completions: CompletionQueue;
  /** Most branches a dynamic fork may start (`flow.fork.max-width`). */
  readonly maxForkWidth: number;
  /** A `flow://` task: the sub-flow runs with the parent's correlation id, trace and root map. */
  startChild(
    flow: CompiledFlow,
    input: unknown,
    parent: InstanceView,
    options: { ttlMs: number; parentStep: TaskStep | undefined },
  ): Promise<FlowResult>;
  /** An `ext:<key>` target of `flow`'s mappings (value null or undefined: a removal). */
  external(flow: CompiledFlow, from: InstanceView, key: string, value: unknown): void;
}
