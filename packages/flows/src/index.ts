export * from './compile/compiled-flow.ts';
export * from './compile/flow-validation-error.ts';
export * from './mapping/compiled-mapping.ts';
export * from './run/index.ts';
