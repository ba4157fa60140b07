/**
 * Validation of API definitions, collecting every problem at once (RIG stopped at some). The rules
 * are the JSON Schemas of the internal API's OpenAPI document (`ApiDefinition`,
 * `ApiDefinitionUpdate`, `Endpoint` … in service-kit's internal-api.openapi.json), checked by ajv;
 * a target's fields and rules (topic, response_from, publish_credentials, schema …) live in the
 * `Endpoint` schema only. This module maps ajv's errors to RIG's error map (api-error-map.ts),
 * checks what a schema cannot say (regexes compile, endpoint ids are unique, `use_env` variables,
 * target hosts), and fills in every default.
 *
 * Unlike RIG it also validates methods (uppercased, one of the methods the proxy forwards), the
 * regex syntax, target/response_from combinations, unknown fields (a typo such as `secure` must not
 * leave an endpoint open), and it asks for `proxy` only when some endpoint forwards over HTTP.
 */
import { fillInternalApiDefaults, internalApiSchema } from '@gatehouse/service-kit';
import type { ApiDefinition } from './api-definition.ts';
import { addError, MapBuilder, type ValidationErrors } from './api-error-map.ts';
import { compilePathRegex } from './path-regex.ts';
import { TargetAllowList } from '../forwarding/index.ts';
import { unreadableUseEnv } from './use-env-scope.ts';

export type { ValidationErrors } from './api-error-map.ts';

export type ValidationResult = { ok: true; api: ApiDefinition } | { ok: false; errors: ValidationErrors };

export interface ValidationOptions {
  /** The variables `proxy.use_env` may read (use-env-scope.ts); default none. */
  env?: NodeJS.ProcessEnv;
  /** PROXY_TARGET_ALLOW (target-allow-list.ts); default: public addresses only. */
  targets?: TargetAllowList;
}

const publicTargetsOnly = new TargetAllowList();

type Json = Record<string, unknown>;

/** A whole definition (POST, PROXY_CONFIG_FILE, the merged PUT). */
export function validateApi(raw: unknown, options: ValidationOptions = {}): ValidationResult {
  const input = canonicalCase(raw);
  const errors = problemsOf(input, 'ApiDefinition', options);
  return errors === undefined ? { ok: true, api: normalized(input as Json) } : { ok: false, errors };
}

/**
 * The body of a PUT on its own, before the stored definition is looked up: each field it gives
 * must be valid (the merged definition is then validated whole). The path's id names the map keys.
 */
export function validateApiUpdate(
  raw: unknown,
  id: string,
  options: ValidationOptions = {},
): ValidationErrors | undefined {
  const input = canonicalCase(raw);
  if (isObject(input) && input['id'] === undefined) input['id'] = id;
  return problemsOf(input, 'ApiDefinitionUpdate', options);
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

function problemsOf(
  input: unknown,
  schema: string,
  options: ValidationOptions,
): ValidationErrors | undefined {
  const validate = internalApiSchema(schema);
  const map = new MapBuilder(input);
  if (!validate(input)) map.addSchemaErrors(validate.errors ?? []);
  if (isObject(input)) checkBeyondSchema(input, map, options);
  return map.result();
}

/** `method`, `target` and `response_from` are accepted in any case (the document says so). */
function canonicalCase(raw: unknown): unknown {
  if (!isObject(raw)) return raw;
  const copy: Json = { ...raw };
  const version = copy['version_data'];
  const endpoints = isObject(version) && isObject(version['default']) ? version['default']['endpoints'] : [];
  if (!Array.isArray(endpoints) || endpoints.length === 0) return copy;
  const cased = endpoints.map((e: unknown) => {
    if (!isObject(e)) return e;
    const c: Json = { ...e };
    if (typeof c['method'] === 'string') c['method'] = c['method'].toUpperCase();
    for (const f of ['target', 'response_from']) if (typeof c[f] === 'string') c[f] = c[f].toLowerCase();
    return c;
  });
  const defaults = (version as Json)['default'] as Json;
  copy['version_data'] = { ...(version as Json), default: { ...defaults, endpoints: cased } };
  return copy;
}

/** What a JSON Schema cannot say: regexes compile, ids are unique, env variables, target hosts. */
function checkBeyondSchema(api: Json, map: MapBuilder, options: ValidationOptions): void {
  const endpoints = endpointsOf(api);
  const seen = new Set<string>();
  for (const e of endpoints) {
    if (!isObject(e)) continue;
    const where = map.endpointKey(e);
    const regex = e['path_regex'];
    if (typeof regex === 'string' && regex !== '') {
      const compiled = compilePathRegex(regex);
      if (!compiled.ok) map.add(where, 'path_regex', `is not a valid regular expression: ${compiled.error}`);
    }
    if (typeof e['id'] === 'string' && e['id'] !== '') {
      if (seen.has(e['id'])) map.add(where, 'id', 'must be unique within the API');
      seen.add(e['id']);
    }
  }
  const proxy = api['proxy'];
  if (!isObject(proxy) || typeof proxy['target_url'] !== 'string' || proxy['target_url'] === '') return;
  const targetUrl = proxy['target_url'];
  const useEnv = proxy['use_env'] === true;
  const host = useEnv ? options.env?.[targetUrl] : targetUrl;
  if (useEnv && (host === undefined || host === ''))
    map.add('api', 'target_url', unreadableUseEnv(targetUrl));
  else if (host !== undefined && !isTargetHost(host))
    map.add('api', 'target_url', 'must be a host name or an http(s)://host URL');
  else if (host !== undefined) {
    const refusal = (options.targets ?? publicTargetsOnly).refusalOfHost(hostnameOf(host));
    if (refusal !== undefined)
      map.add('api', 'target_url', `is not allowed: ${refusal} (PROXY_TARGET_ALLOW lists what may be)`);
  }
}

/**
 * The valid definition with every default filled in (the `default`s of the document's schemas), so
 * the rest of the proxy never guesses; listing metadata and RIG's endpoint `type` are dropped. With
 * `auth_type: jwt` and no source named, the Authorization header is the default (RIG forced it on
 * create and dropped custom names); explicitly configured sources are kept as given.
 */
function normalized(input: Json): ApiDefinition {
  const api = structuredClone(input);
  fillInternalApiDefaults('ApiDefinition', api);
  const auth = api['auth'] as ApiDefinition['auth'];
  if (
    api['auth_type'] === 'jwt' &&
    (input['auth'] as Json | undefined)?.['use_header'] === undefined &&
    !auth.use_query
  )
    Object.assign(auth, { use_header: true, header_name: 'Authorization' });
  const version = (api['version_data'] as Json)['default'] as Json;
  const add = (version['transform_request_headers'] as Json | undefined)?.['add_headers'] as
    | Record<string, string>
    | undefined;
  const proxy = api['proxy'] as Json | undefined;
  return {
    ...pick(api, ['id', 'name', 'auth_type']),
    auth,
    versioned: false,
    version_data: {
      default: {
        endpoints: endpointsOf(api).map((e) => withoutEmpty(pick(e as Json, endpointFields))),
        ...(add !== undefined && {
          transform_request_headers: {
            add_headers: Object.fromEntries(Object.entries(add).map(([n, v]) => [n.toLowerCase(), v])),
          },
        }),
      },
    },
    ...(proxy !== undefined && { proxy: pick(proxy, ['target_url', 'port', 'use_env']) }),
  } as unknown as ApiDefinition;
}

/** An endpoint's fields as the proxy keeps them: all the schema knows but RIG's ignored `type`. */
const endpointFields = Object.keys(
  (internalApiSchema('Endpoint').schema as { properties: Json }).properties,
).filter((f) => f !== 'type');

function pick(from: Json, fields: readonly string[]): Json {
  return Object.fromEntries(fields.filter((f) => from[f] !== undefined).map((f) => [f, from[f]]));
}

/** An empty `path_replacement` or `topic` is the same as none. */
function withoutEmpty(endpoint: Json): Json {
  for (const f of ['path_replacement', 'topic']) if (endpoint[f] === '') delete endpoint[f];
  return endpoint;
}

function endpointsOf(api: Json): unknown[] {
  const version = api['version_data'];
  const endpoints = isObject(version) && isObject(version['default']) ? version['default']['endpoints'] : [];
  return Array.isArray(endpoints) ? endpoints : [];
}

/** The hostname as target-origin.ts will connect to it (the URL parser normalizes `0x7f.1` too). */
function hostnameOf(value: string): string {
  return new URL(/^https?:\/\//i.test(value) ? value : `http://${value}`).hostname;
}

function isTargetHost(value: string): boolean {
  if (/^https?:\/\//i.test(value)) return URL.canParse(value) && new URL(value).hostname !== '';
  return URL.canParse(`http://${value}`) && !value.includes('/');
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
