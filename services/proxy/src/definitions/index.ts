// API definitions: the model, path_regex, validation and its error map, the store, /vN/apis, the config file.
export {
  type ApiDefinition,
  type AuthSettings,
  type Endpoint,
  type EventTarget,
  type HttpMethod,
  httpMethods,
  isEventTarget,
  type ProxySettings,
  type ResponseFrom,
  responseSources,
  type StoredApi,
  type Target,
  targets,
  waitsForCorrelation,
} from './api-definition.ts';
export {
  describeValidationErrors,
  validateApi,
  validateApiList,
  validateApiUpdate,
  type ValidationErrors,
  type ValidationOptions,
  type ValidationResult,
} from './api-validation.ts';
export { createApisEndpoint } from './apis-endpoint.ts';
export { loadProxyConfig } from './config-source.ts';
export { apiKeyPrefix, DefinitionStore } from './definition-store.ts';
export {
  type CompiledRegex,
  compilePathRegex,
  compileReplacement,
  type PathMatch,
  type PathPattern,
} from './path-regex.ts';
export { unreadableUseEnv, useEnvAllowedSetting, useEnvScope } from './use-env-scope.ts';
