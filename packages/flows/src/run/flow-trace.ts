/**
 * What the runner tells its host while a flow runs, so the host can log and trace it like a
 * function call: one step per task (the host records a trace record and an OpenTelemetry span with
 * the flow id and the task name) and one summary per flow instance. The runner itself knows no
 * tracer and no HTTP.
 */

/** A step the host opened for one task; passed back when the task ends. */
export type TaskStep = unknown;

export interface FlowTrace {
  /** Trace id of the request (`model.trace`, `my_trace_id` of every task's function). */
  readonly id: string;
  /** Trace path of the request (`my_trace_path`). */
  readonly path: string;
  /** A flow instance starts (sub-flows included) under `parent`; its tasks run under this step. */
  beginFlow(flowId: string, parent: TaskStep | undefined): TaskStep;
  /** The instance closed: once per instance. */
  endFlow(step: TaskStep, summary: FlowSummary): void;
  /** A task starts its function (or sub-flow, `route` = `flow://id`) under its flow's step. */
  beginTask(flowId: string, task: string, route: string, parent: TaskStep): TaskStep;
  endTask(step: TaskStep, status: number, error?: string): void;
}

export interface FlowSummary {
  flow: string;
  instance: string;
  /** Milliseconds since the instance started. */
  ms: number;
  /** True when the instance ended by an abort (timeout, unhandled failure, engine error). */
  aborted: boolean;
  /** `name` or `name(route)` when the task's name is not its route; spent time in ms. */
  tasks: Array<{ name: string; spent: number }>;
}

/** The log calls the runner makes (a pino logger fits). */
export interface FlowLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}
