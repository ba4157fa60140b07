// Trace records of traced endpoints and W3C trace context ids.
export { newCorrelationId, newId, parseTraceparent } from './trace-context.ts';
export { RequestTrace, type TraceStep } from './trace-recorder.ts';
