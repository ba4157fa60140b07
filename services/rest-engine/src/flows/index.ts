// Flows run by http.flow.adapter: the flow engine, a flow's input from the request, its trace steps.
export { checkFlowEndpoints, registerFlowFunctions, startFlowEngine } from './flow-engine.ts';
export { flowDeadlineMs, flowInputOf } from './flow-input.ts';
export { flowTraceOf } from './flow-tracing.ts';
