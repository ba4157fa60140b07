/**
 * The compiled form of one Event Script flow file: an immutable graph the runner executes. Built
 * once at start by the flow compiler (compile-flow.ts); every mapping line is already parsed and
 * every Mercury load-time rule already checked, so the runner never re-reads the YAML.
 */
import type { CompiledMapping } from '../mapping/compiled-mapping.ts';

export type ExecutionType =
  | 'decision'
  | 'response'
  | 'end'
  | 'sequential'
  | 'parallel'
  | 'pipeline'
  | 'fork'
  | 'sink';

/** The execution types in Mercury's order (used in its validation message). */
export const EXECUTION_TYPES: readonly ExecutionType[] = [
  'decision',
  'response',
  'end',
  'sequential',
  'parallel',
  'pipeline',
  'fork',
  'sink',
];

/** A side of a for-loop comparison: a model key (`model.n`, as written) or an integer. */
export type LoopOperand = { readonly key: string } | { readonly value: number };

/** `if (model.x) break` / `if (model.x) continue`; `key` is the model key as written (`model.x`). */
export interface LoopCondition {
  readonly key: string;
  readonly action: 'break' | 'continue';
}

/**
 * `for (model.n = 0; model.n < 3; model.n++)`: `init` is optional (the two-segment form), keys are
 * written with their `model.` prefix. Read/write them with readModelKey / writeModelKey.
 */
export interface ForLoop {
  readonly kind: 'for';
  readonly init?: { readonly key: string; readonly value: number };
  readonly compare: {
    readonly left: LoopOperand;
    readonly op: '<' | '<=' | '>' | '>=';
    readonly right: LoopOperand;
  };
  readonly step: { readonly key: string; readonly delta: 1 | -1 };
  readonly conditions: readonly LoopCondition[];
}

/** `while (model.k)`: a round runs while the key holds Boolean true. */
export interface WhileLoop {
  readonly kind: 'while';
  readonly key: string;
  readonly conditions: readonly LoopCondition[];
}

export type CompiledLoop = ForLoop | WhileLoop;

export interface CompiledTask {
  /** The task's name: `name`, else `process` (so `flow://x` for an unnamed sub-flow task). */
  readonly name: string;
  /** `process`: a function route, or `flow://<id>` for a sub-flow (see subFlow). */
  readonly functionRoute: string;
  /** The child flow's id when functionRoute is `flow://<id>`. */
  readonly subFlow?: string;
  readonly description: string;
  readonly execution: ExecutionType;
  readonly inputMappings: readonly CompiledMapping[];
  readonly outputMappings: readonly CompiledMapping[];
  /**
   * Next task names as written; empty for end and sink. A decision entry may be `@retry` or
   * `@retry | task` (Mercury splits it on `|` and sorts it when the branch is taken).
   */
  readonly next: readonly string[];
  /** fork: the task run once every branch has completed. */
  readonly join?: string;
  /** fork: dynamic fork source, `model.<key>` holding a list (one branch per element). */
  readonly source?: string;
  /** pipeline: the step task names in order (empty for other types). */
  readonly pipeline: readonly string[];
  /** pipeline: the loop, when `loop.statement` is set. */
  readonly loop?: CompiledLoop;
  /**
   * pipeline: `loop.condition` entries (the compiler always sets it, empty when none; absent means
   * none). Mercury evaluates them also for a pipeline without `loop.statement`; when there is a
   * loop, the same array is its `conditions`.
   */
  readonly loopConditions?: readonly LoopCondition[];
  /** Fixed dispatch delay in ms (always < the flow's ttl). */
  readonly delayMs?: number;
  /** Dispatch delay read from this model key (`model.x`, as written) when the task runs. */
  readonly delayVar?: string;
  /** Sub-flow tasks only: the child's deadline in ms (< flow ttl). */
  readonly ttlMs?: number;
  /** Task-level exception handler: a task name of this flow. */
  readonly exception?: string;
}

export interface CompiledFlow {
  readonly id: string;
  readonly description: string;
  /** `flow.ttl` in ms (at least 1000; Mercury's duration rules). */
  readonly ttlMs: number;
  readonly firstTask: string;
  /** `flow.exception`: the flow-level handler, a task name of this flow. */
  readonly exceptionHandler?: string;
  /** `external.state.machine`: route or `flow://id` that `ext:` targets go to. */
  readonly externalStateMachine?: string;
  /** Tasks by name. Tasks Mercury drops at load (bad mapping, decision with < 2 next) are absent. */
  readonly tasks: ReadonlyMap<string, CompiledTask>;
  /** The file the flow came from (for logs). */
  readonly file: string;
}
