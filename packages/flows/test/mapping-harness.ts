/**
 * Runs mapping lines the way the runner does, for the mapping tests: an input mapping builds the
 * function's body and headers, an output mapping builds `output.*` and the decision.
 */
import { applyMappings, compileMapping, type MappingHooks, type MappingScope } from '../src/index.ts';

export interface InputRun {
  body: unknown;
  headers: Record<string, string>;
  model: Record<string, unknown>;
}

export function runInput(
  lines: string[],
  data: {
    input?: unknown;
    model?: Record<string, unknown>;
    error?: Record<string, unknown>;
    hooks?: MappingHooks;
  } = {},
  extra: Partial<MappingScope> = {},
): InputRun {
  const mappings = lines.map((l) => compileMapping(l, { flow: 'f', task: 't', kind: 'input' }));
  const scope: MappingScope = {
    input: data.input ?? {},
    model: data.model ?? {},
    body: {},
    headers: {},
    output: {},
    ...(data.error === undefined ? {} : { error: data.error }),
    ...(data.hooks === undefined ? {} : { hooks: data.hooks }),
    ...extra,
  };
  applyMappings(mappings, scope);
  return { body: scope.body, headers: scope.headers, model: scope.model };
}

export interface OutputRun {
  output: Record<string, unknown>;
  model: Record<string, unknown>;
  decision: unknown;
  decided: boolean;
}

export function runOutput(
  lines: string[],
  data: {
    input?: unknown;
    model?: Record<string, unknown>;
    result?: unknown;
    header?: Record<string, string>;
    status?: number;
    hooks?: MappingHooks;
    decisionTask?: boolean;
  } = {},
): OutputRun {
  const mappings = lines.map((l) =>
    compileMapping(l, { flow: 'f', task: 't', kind: 'output', decisionTask: data.decisionTask ?? false }),
  );
  const run: OutputRun = { output: {}, model: data.model ?? {}, decision: undefined, decided: false };
  applyMappings(mappings, {
    input: data.input ?? {},
    model: run.model,
    result: data.result ?? null,
    header: data.header ?? {},
    status: data.status ?? 200,
    body: {},
    headers: {},
    output: run.output,
    setDecision: (v) => {
      run.decision = v;
      run.decided = true;
    },
    ...(data.hooks === undefined ? {} : { hooks: data.hooks }),
  });
  return run;
}
