export * from './compile/compile-flow.ts';
export * from './compile/compiled-flow.ts';
export * from './compile/flow-validation-error.ts';
export * from './compile/load-flows.ts';
export { applyMappings } from './mapping/apply-mappings.ts';
export { compileMapping } from './mapping/compile-mapping.ts';
export * from './mapping/compiled-mapping.ts';
export { readModelKey, writeModelKey } from './mapping/model-key.ts';
export { PLUGINS } from './mapping/plugins.ts';
