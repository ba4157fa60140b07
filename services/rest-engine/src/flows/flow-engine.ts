/**
 * The flow engine of the REST engine: loads the flows listed by `yaml.flow.automation` (invalid
 * ones are logged and left out, as Mercury does), registers the built-in functions flows expect
 * (`no.op`, `simple.exception.handler`, `resilience.handler`) and runs flows on the same function
 * registry as endpoints, so a task gets its function's `instances` limit like any request.
 */
import { FlowRunner, flowBuiltinFunctions, loadFlows } from '@gatehouse/flows';
import type { Logger } from '@gatehouse/service-kit';
import { type AppProperties, resolveLocation, type RestSettings } from '../config/index.ts';
import type { Endpoint } from '../endpoints/index.ts';
import type { FunctionRegistry } from '../functions/index.ts';

export function registerFlowFunctions(registry: FunctionRegistry): void {
  for (const fn of flowBuiltinFunctions()) registry.register(fn, 'built-in');
}

export function startFlowEngine(
  settings: RestSettings,
  props: AppProperties,
  env: NodeJS.ProcessEnv,
  registry: FunctionRegistry,
  logger: Logger,
): FlowRunner {
  const loaded = loadFlows({
    configFolder: settings.configFolder,
    property: settings['yaml.flow.automation'],
    env,
    config: (key: string) => props.get(key),
    log: logger,
  });
  return new FlowRunner({
    flows: loaded.flows,
    // A task's function gets its mapped body where an endpoint's gets the AsyncHttpRequest (or
    // what it declared as its input, made of that body).
    functions: {
      has: (route) => registry.has(route),
      call: (route, headers, body) => registry.callTask(route, headers, body),
    },
    logger,
    config: (key: string) => props.get(key),
    resourceFolder: settings.configFolder,
    fileFolders: settings['flow.file.folders'].map((f) => resolveLocation(f, settings.configFolder)),
    maxForkWidth: settings['flow.fork.max-width'],
  });
}

/** Start-up warning for each flow endpoint whose flow did not load (it will answer 500). */
export function checkFlowEndpoints(endpoints: readonly Endpoint[], runner: FlowRunner, logger: Logger): void {
  for (const e of endpoints) {
    if (e.flow !== undefined && !runner.flows.get(e.flow)) {
      logger.warn(
        `REST entry ${e.label}: flow ${e.flow} is not loaded; the endpoint answers 500 Flow ${e.flow} not found`,
      );
    }
  }
}
