export * from './compile/compiled-flow.ts';
export * from './compile/flow-validation-error.ts';
export { applyMappings } from './mapping/apply-mappings.ts';
export { compileMapping } from './mapping/compile-mapping.ts';
export * from './mapping/compiled-mapping.ts';
export { readModelKey, writeModelKey } from './mapping/model-key.ts';
export * from './run/index.ts';
