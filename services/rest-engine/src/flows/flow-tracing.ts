/**
 * Flow steps in a request's trace: the flow instance is a `task.executor` step (from
 * `event.script.manager`) whose record carries Mercury's run summary (`Run 3 tasks in 7 ms`, the
 * tasks with their time, the flow id); each task's function is a step under it (from
 * `task.executor`) with the flow id and task name on its record and span.
 */
import type { FlowSummary, FlowTrace, TaskStep } from '@gatehouse/flows';
import type { RequestTrace, TraceStep } from '../tracing/index.ts';

interface FlowStep {
  step: TraceStep;
  annotations: Record<string, string>;
}

export function flowTraceOf(trace: RequestTrace): FlowTrace {
  return {
    id: trace.id,
    path: trace.path,
    beginFlow(flowId: string, parent: TaskStep | undefined): TaskStep {
      const step = trace.begin('task.executor', 'event.script.manager', stepOf(parent), {
        'gw.flow.id': flowId,
      });
      return { step, annotations: { flow: flowId } } satisfies FlowStep;
    },
    endFlow(handle: TaskStep, summary: FlowSummary): void {
      const { step } = handle as FlowStep;
      const annotations = {
        execution: `Run ${summary.tasks.length} tasks in ${Math.round(summary.ms)} ms`,
        tasks: summary.tasks,
        flow: summary.flow,
      };
      trace.end(step, summary.aborted ? 400 : 200, summary.aborted ? 'Flow aborted' : undefined, annotations);
    },
    beginTask(flowId: string, task: string, route: string, parent: TaskStep): TaskStep {
      const attributes = { 'gw.flow.id': flowId, 'gw.flow.task': task };
      const step = trace.begin(route, 'task.executor', stepOf(parent), attributes);
      return { step, annotations: { flow: flowId, task } } satisfies FlowStep;
    },
    endTask(handle: TaskStep, status: number, error?: string): void {
      const { step, annotations } = handle as FlowStep;
      trace.end(step, status, error, annotations);
    },
  };
}

/** The adapter's own step (a TraceStep) or one of the flow's steps. */
function stepOf(handle: TaskStep | undefined): TraceStep | undefined {
  if (handle === undefined) return undefined;
  return 'step' in (handle as object) ? (handle as FlowStep).step : (handle as TraceStep);
}
