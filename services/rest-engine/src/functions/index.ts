// Functions: the registry every call goes through, function folders loaded, the built-in ones.
export {
  actuatorEndpoints,
  builtinFunctions,
  flowAdapterRoute,
  relayRoute,
  responseRoute,
} from './builtin-functions.ts';
export { loadFunctions } from './function-loader.ts';
export { FunctionRegistry } from './function-registry.ts';
