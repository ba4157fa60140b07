export * from './builtin-functions.ts';
export * from './flow-functions.ts';
export * from './flow-result.ts';
export * from './flow-runner.ts';
export * from './flow-trace.ts';
