/**
 * Validation of API definitions, collecting every problem at once (RIG stopped at some). The error
 * map has RIG's shape (reference §2.3): a key names where the problem is — `api` for the API's own
 * fields, `<apiId>` for its auth settings, `<apiId>/<endpointId>` for an endpoint — and holds a list
 * of one-entry objects `{ field: message }`.
 *
 * Unlike RIG it also validates methods (uppercased, one of the methods the proxy forwards), the
 * regex syntax, target/response_from combinations, unknown fields (a typo such as `secure` must not
 * leave an endpoint open), and it asks for `proxy` only when some endpoint forwards over HTTP.
 */
import {
  type ApiDefinition,
  type AuthSettings,
  type Endpoint,
  type HttpMethod,
  httpMethods,
  type ProxySettings,
  type ResponseFrom,
  responseSources,
  type Target,
  targets,
} from './api-definition.ts';
import { compilePathRegex } from './path-regex.ts';
import { unreadableUseEnv } from './use-env-scope.ts';

export type ValidationErrors = Record<string, Array<Record<string, string>>>;

export type ValidationResult = { ok: true; api: ApiDefinition } | { ok: false; errors: ValidationErrors };

export interface ValidationOptions {
  /** The variables `proxy.use_env` may read (use-env-scope.ts); default none. */
  env?: NodeJS.ProcessEnv;
}

/** Fields RIG adds when it lists definitions; accepted on input so a listed API can be posted back. */
const metadataFields = new Set(['active', 'ref_number', 'timestamp', 'node_name', 'phx_ref']);
const apiFields = new Set(['id', 'name', 'auth_type', 'auth', 'versioned', 'version_data', 'proxy']);
const endpointFields = new Set([
  'id',
  'method',
  'path_regex',
  'path_replacement',
  'secured',
  'transform_request_headers',
  'target',
  'topic',
  'schema',
  'response_from',
  'response_timeout',
  'publish_credentials',
  'type',
]);
const maxResponseTimeoutMs = 10 * 60_000;

/** Which response_from values each target can serve. */
const responsesByTarget: Record<Target, readonly ResponseFrom[]> = {
  http: ['http', 'kafka', 'http_async', 'kinesis'],
  kafka: ['http', 'kafka', 'http_async', 'kinesis'],
  kinesis: ['http', 'kafka', 'http_async', 'kinesis'],
  nats: ['http', 'nats', 'kafka', 'http_async', 'kinesis'],
};

class Problems {
  readonly errors: ValidationErrors = {};
  add(where: string, field: string, message: string): void {
    addError(this.errors, where, { [field]: message });
  }
  get empty(): boolean {
    return Object.keys(this.errors).length === 0;
  }
}

export function validateApi(raw: unknown, options: ValidationOptions = {}): ValidationResult {
  const problems = new Problems();
  const api = readApi(raw, problems, options.env ?? {});
  return problems.empty && api ? { ok: true, api } : { ok: false, errors: problems.errors };
}

/** Validates a list of APIs (PROXY_CONFIG_FILE); ids must be unique across the list. */
export function validateApiList(
  raw: unknown,
  options: ValidationOptions = {},
): { ok: true; apis: ApiDefinition[] } | { ok: false; errors: ValidationErrors } {
  if (!Array.isArray(raw))
    return { ok: false, errors: { api: [{ apis: 'must be a list of API definitions' }] } };
  const errors: ValidationErrors = {};
  const apis: ApiDefinition[] = [];
  const seen = new Set<string>();
  for (const item of raw) {
    const result = validateApi(item, options);
    if (!result.ok) {
      for (const [key, list] of Object.entries(result.errors)) for (const e of list) addError(errors, key, e);
      continue;
    }
    if (seen.has(result.api.id)) addError(errors, result.api.id, { id: 'must be unique' });
    seen.add(result.api.id);
    apis.push(result.api);
  }
  return Object.keys(errors).length === 0 ? { ok: true, apis } : { ok: false, errors };
}

/** One line per problem, for a start-up failure message. */
export function describeValidationErrors(errors: ValidationErrors): string[] {
  return Object.entries(errors).flatMap(([where, list]) =>
    list.flatMap((entry) => Object.entries(entry).map(([field, message]) => `${where}: ${field} ${message}`)),
  );
}

function readApi(raw: unknown, problems: Problems, env: NodeJS.ProcessEnv): ApiDefinition | undefined {
  if (!isObject(raw)) {
    problems.add('api', 'api', 'must be an object');
    return undefined;
  }
  for (const key of Object.keys(raw))
    if (!apiFields.has(key) && !metadataFields.has(key)) problems.add('api', key, 'is not a known field');
  const id = requiredString(raw, 'id', 'api', problems);
  const name = requiredString(raw, 'name', 'api', problems);
  const authType = readAuthType(raw, problems);
  const apiKey = id ?? '';
  const auth = readAuth(raw['auth'], authType, apiKey, problems);
  if (raw['versioned'] !== undefined && raw['versioned'] !== false) {
    if (typeof raw['versioned'] !== 'boolean') problems.add('api', 'versioned', 'must be boolean');
    else problems.add('api', 'versioned', 'versioned APIs are not supported; use false');
  }
  const version = readVersionData(raw['version_data'], problems);
  const endpoints = (version?.endpoints ?? []).map((e) => readEndpoint(e, apiKey, authType, problems));
  // From the raw endpoints: an endpoint with other problems still tells whether it needs `proxy`.
  const forwardsOverHttp = (version?.endpoints ?? []).some(
    (e) => isObject(e) && (e['target'] === undefined || String(e['target']).toLowerCase() === 'http'),
  );
  const proxy = readProxy(raw['proxy'], forwardsOverHttp, problems, env);
  checkUniqueEndpointIds(endpoints, apiKey, problems);
  if (id === undefined || name === undefined || version === undefined) return undefined;
  if (endpoints.some((e) => e === undefined)) return undefined;
  return {
    id,
    name,
    auth_type: authType,
    auth,
    versioned: false,
    version_data: {
      default: {
        endpoints: endpoints as Endpoint[],
        ...(version.addHeaders !== undefined && {
          transform_request_headers: { add_headers: version.addHeaders },
        }),
      },
    },
    ...(proxy !== undefined && { proxy }),
  };
}

function readAuthType(raw: Record<string, unknown>, problems: Problems): 'jwt' | 'none' {
  const value = raw['auth_type'];
  if (value === undefined) return 'none';
  if (value === 'jwt' || value === 'none') return value;
  problems.add('api', 'auth_type', 'must be one of ["jwt", "none"]');
  return 'none';
}

/**
 * With `auth_type: jwt` and no source named, the Authorization header is the default (RIG forced
 * it on create and dropped custom names); explicitly configured sources are kept as given.
 */
function readAuth(raw: unknown, authType: 'jwt' | 'none', where: string, problems: Problems): AuthSettings {
  const auth: AuthSettings = { use_header: false, header_name: '', use_query: false, query_name: '' };
  if (raw !== undefined && !isObject(raw)) {
    problems.add(where, 'auth', 'must be an object');
    return auth;
  }
  const given = raw ?? {};
  for (const key of Object.keys(given))
    if (!(key in auth)) problems.add(where, key, 'is not a known field of auth');
  auth.use_header = optionalBool(given, 'use_header', where, problems) ?? false;
  auth.use_query = optionalBool(given, 'use_query', where, problems) ?? false;
  auth.header_name = optionalString(given, 'header_name', where, problems) ?? '';
  auth.query_name = optionalString(given, 'query_name', where, problems) ?? '';
  if (auth.use_header && auth.header_name === '') problems.add(where, 'header_name', 'must be present');
  if (auth.use_query && auth.query_name === '') problems.add(where, 'query_name', 'must be present');
  if (auth.header_name !== '' && !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(auth.header_name))
    problems.add(where, 'header_name', 'must be a valid header name');
  if ((auth.use_header || auth.use_query) && authType !== 'jwt')
    problems.add(where, 'auth_type', 'must be one of ["jwt"]');
  if (authType === 'jwt' && !auth.use_header && !auth.use_query) {
    if (given['use_header'] === undefined) {
      auth.use_header = true;
      auth.header_name = 'Authorization';
    } else problems.add(where, 'auth', 'auth_type jwt needs use_header or use_query');
  }
  return auth;
}

interface VersionData {
  endpoints: unknown[];
  addHeaders: Record<string, string> | undefined;
}

function readVersionData(raw: unknown, problems: Problems): VersionData | undefined {
  if (raw === undefined) {
    problems.add('api', 'version_data', 'must be present');
    return undefined;
  }
  if (!isObject(raw) || Object.keys(raw).length === 0) {
    problems.add('api', 'version_data', 'must have at least one version, e.g. default');
    return undefined;
  }
  for (const key of Object.keys(raw))
    if (key !== 'default')
      problems.add('api', 'version_data', `version "${key}" is not supported; use default`);
  const version = raw['default'];
  if (!isObject(version)) {
    problems.add('api', 'default', 'must be an object with endpoints');
    return undefined;
  }
  const endpoints = version['endpoints'];
  if (!Array.isArray(endpoints)) {
    problems.add('api', 'endpoints', 'must be list');
    return undefined;
  }
  return { endpoints, addHeaders: readAddHeaders(version['transform_request_headers'], problems) };
}

function readAddHeaders(raw: unknown, problems: Problems): Record<string, string> | undefined {
  if (raw === undefined) return undefined;
  const add = isObject(raw) ? raw['add_headers'] : undefined;
  if (!isObject(add) || !Object.values(add).every((v) => typeof v === 'string')) {
    problems.add('api', 'transform_request_headers', 'must be { "add_headers": { name: string value } }');
    return undefined;
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(add)) headers[name.toLowerCase()] = value as string;
  return headers;
}

function readProxy(
  raw: unknown,
  required: boolean,
  problems: Problems,
  env: NodeJS.ProcessEnv,
): ProxySettings | undefined {
  if (raw === undefined) {
    if (required) problems.add('api', 'proxy', 'must be present');
    return undefined;
  }
  if (!isObject(raw)) {
    problems.add('api', 'proxy', 'must be an object');
    return undefined;
  }
  for (const key of Object.keys(raw))
    if (!['target_url', 'port', 'use_env'].includes(key))
      problems.add('api', key, 'is not a known field of proxy');
  const targetUrl = requiredString(raw, 'target_url', 'api', problems);
  const port = raw['port'];
  const portOk = Number.isInteger(port) && (port as number) >= 1 && (port as number) <= 65535;
  if (!portOk) problems.add('api', 'port', 'must be integer');
  const useEnv = optionalBool(raw, 'use_env', 'api', problems) ?? false;
  if (targetUrl === undefined || !portOk) return undefined;
  const host = useEnv ? env[targetUrl] : targetUrl;
  if (useEnv && (host === undefined || host === ''))
    problems.add('api', 'target_url', unreadableUseEnv(targetUrl));
  else if (host !== undefined && !isTargetHost(host))
    problems.add('api', 'target_url', 'must be a host name or an http(s)://host URL');
  return { target_url: targetUrl, port: port as number, use_env: useEnv };
}

function readEndpoint(
  raw: unknown,
  apiKey: string,
  authType: 'jwt' | 'none',
  problems: Problems,
): Endpoint | undefined {
  if (!isObject(raw)) {
    problems.add(`${apiKey}/`, 'endpoint', 'must be an object');
    return undefined;
  }
  const endpointId = typeof raw['id'] === 'string' ? raw['id'] : '';
  const where = `${apiKey}/${endpointId}`;
  const count = () => problems.errors[where]?.length ?? 0;
  const before = count();
  if ('path' in raw) problems.add(where, 'path', removedPathHint(raw['path']));
  if ('not_secured' in raw) problems.add(where, 'not_secured', 'was removed; use "secured": true or false');
  for (const key of Object.keys(raw))
    if (!endpointFields.has(key) && key !== 'path' && key !== 'not_secured')
      problems.add(where, key, 'is not a known field');
  const id = requiredString(raw, 'id', where, problems);
  const pathRegex = requiredString(raw, 'path_regex', where, problems);
  const method = readMethod(raw, where, problems);
  if (pathRegex !== undefined) {
    const compiled = compilePathRegex(pathRegex);
    if (!compiled.ok)
      problems.add(where, 'path_regex', `is not a valid regular expression: ${compiled.error}`);
  }
  const pathReplacement = optionalString(raw, 'path_replacement', where, problems);
  const secured = optionalBool(raw, 'secured', where, problems) ?? false;
  if (secured && authType !== 'jwt') problems.add(where, 'auth_type', 'must be one of ["jwt"]');
  const transform = optionalBool(raw, 'transform_request_headers', where, problems) ?? false;
  const target = readChoice(raw, 'target', targets, where, problems) ?? 'http';
  const responseFrom = readChoice(raw, 'response_from', responseSources, where, problems) ?? 'http';
  const topic = optionalString(raw, 'topic', where, problems);
  if (target !== 'http' && (topic === undefined || topic === ''))
    problems.add(where, 'topic', 'must be present');
  // --- Avro (avro branch): `schema` names the registry subject whose latest schema encodes the data ---
  const schema = optionalString(raw, 'schema', where, problems);
  if (schema !== undefined) {
    if (raw['target'] === undefined) problems.add(where, 'target', 'must be present');
    else if (target !== 'kafka') problems.add(where, 'schema', 'applies to kafka targets only');
    if (schema === '') problems.add(where, 'schema', 'must have a length of at least 1');
  }
  // --- end Avro ---
  if (!responsesByTarget[target].includes(responseFrom))
    problems.add(
      where,
      'response_from',
      `must be one of ${JSON.stringify(responsesByTarget[target])} for target ${target}`,
    );
  const timeout = raw['response_timeout'];
  if (
    timeout !== undefined &&
    !(Number.isInteger(timeout) && (timeout as number) > 0 && (timeout as number) <= maxResponseTimeoutMs)
  )
    problems.add(
      where,
      'response_timeout',
      `must be an integer of milliseconds, 1 to ${maxResponseTimeoutMs}`,
    );
  const publishCredentials = optionalBool(raw, 'publish_credentials', where, problems) ?? false;
  if (publishCredentials && target === 'http')
    problems.add(
      where,
      'publish_credentials',
      'applies to kafka, kinesis and nats targets only (an http target gets the headers anyway)',
    );
  if (count() !== before || id === undefined || pathRegex === undefined || method === undefined)
    return undefined;
  return {
    id,
    method,
    path_regex: pathRegex,
    ...(pathReplacement !== undefined && pathReplacement !== '' && { path_replacement: pathReplacement }),
    secured,
    transform_request_headers: transform,
    target,
    ...(topic !== undefined && topic !== '' && { topic }),
    ...(schema !== undefined && { schema }),
    response_from: responseFrom,
    ...(timeout !== undefined && { response_timeout: timeout as number }),
    publish_credentials: publishCredentials,
  };
}

function readMethod(raw: Record<string, unknown>, where: string, problems: Problems): HttpMethod | undefined {
  const method = requiredString(raw, 'method', where, problems);
  if (method === undefined) return undefined;
  const upper = method.toUpperCase();
  if ((httpMethods as readonly string[]).includes(upper)) return upper as HttpMethod;
  problems.add(where, 'method', `must be one of ${JSON.stringify(httpMethods)}`);
  return undefined;
}

function readChoice<T extends string>(
  raw: Record<string, unknown>,
  field: string,
  choices: readonly T[],
  where: string,
  problems: Problems,
): T | undefined {
  const value = raw[field];
  if (value === undefined) return undefined;
  const lower = typeof value === 'string' ? value.toLowerCase() : undefined;
  if (lower !== undefined && (choices as readonly string[]).includes(lower)) return lower as T;
  problems.add(where, field, `must be one of ${JSON.stringify(choices)}`);
  return undefined;
}

function checkUniqueEndpointIds(
  endpoints: (Endpoint | undefined)[],
  apiKey: string,
  problems: Problems,
): void {
  const seen = new Set<string>();
  for (const endpoint of endpoints) {
    if (endpoint === undefined) continue;
    if (seen.has(endpoint.id))
      problems.add(`${apiKey}/${endpoint.id}`, 'id', 'must be unique within the API');
    seen.add(endpoint.id);
  }
}

/** The migration the 3.0 changelog describes, applied to the value the user gave. */
function removedPathHint(path: unknown): string {
  const example = typeof path === 'string' ? path.replace(/\{[^}/]*\}/g, '(.+)') : '/foo/(.+)';
  return `was removed; use path_regex instead, e.g. "path_regex": ${JSON.stringify(example)}`;
}

function isTargetHost(value: string): boolean {
  if (/^https?:\/\//i.test(value)) return URL.canParse(value) && new URL(value).hostname !== '';
  return URL.canParse(`http://${value}`) && !value.includes('/');
}

function requiredString(
  raw: Record<string, unknown>,
  field: string,
  where: string,
  problems: Problems,
): string | undefined {
  const value = raw[field];
  if (typeof value !== 'string') {
    problems.add(where, field, 'must be string');
    problems.add(where, field, 'must have a length of at least 1');
    return undefined;
  }
  if (value.length === 0) {
    problems.add(where, field, 'must have a length of at least 1');
    return undefined;
  }
  return value;
}

/** The field's value when absent or of the wanted JSON type; otherwise a problem and undefined. */
function optional<T extends 'string' | 'boolean'>(
  raw: Record<string, unknown>,
  field: string,
  type: T,
  where: string,
  problems: Problems,
): (T extends 'string' ? string : boolean) | undefined {
  const value = raw[field];
  if (value === undefined) return undefined;
  if (typeof value === type) return value as T extends 'string' ? string : boolean;
  problems.add(where, field, `must be ${type}`);
  return undefined;
}

const optionalString = (raw: Record<string, unknown>, field: string, where: string, problems: Problems) =>
  optional(raw, field, 'string', where, problems);

const optionalBool = (raw: Record<string, unknown>, field: string, where: string, problems: Problems) =>
  optional(raw, field, 'boolean', where, problems);

function addError(errors: ValidationErrors, where: string, entry: Record<string, string>): void {
  const list = errors[where];
  if (list === undefined) errors[where] = [entry];
  else list.push(entry);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
