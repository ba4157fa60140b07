export * from './gateway-spans.ts';
export * from './otel-bootstrap.ts';
export * from './propagation.ts';
export * from './span-context.ts';
export * from './trace-export.ts';
export * from './traceparent.ts';
export * from './tracestate.ts';
