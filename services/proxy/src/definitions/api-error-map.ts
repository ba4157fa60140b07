/**
 * RIG's error map (reference §2.3) from ajv's errors: a key names where the problem is — `api` for
 * the API's own fields, `<apiId>` for its auth settings, `<apiId>/<endpointId>` for an endpoint —
 * and holds a list of one-entry objects `{ field: message }`.
 *
 * The messages are RIG's where it had one (`must be string`, `must be present` …). A schema of the
 * OpenAPI document gives its own with `x-error`: a message for every keyword of that schema, or a
 * map from ajv keyword (`*` for any) to a message or `{field, message, at}`. `{property}`,
 * `{target}` and `{path_regex_example}` in a message are filled in from the value. A rule (`allOf`
 * item with `if`/`then`) with `x-error.if` is reported as that one problem, instead of what its
 * `then` found; `at` moves it to the auth settings (`auth`) or to each `secured endpoints`.
 */
import { type ErrorObject, internalApiSchema } from '@gatehouse/service-kit';

export type ValidationErrors = Record<string, Array<Record<string, string>>>;

interface Problem {
  field: string;
  message: string;
  at?: 'auth' | 'secured endpoints';
}
type XErrorEntry = string | { field?: string; message: string; at?: Problem['at'] };
type XError = string | Record<string, XErrorEntry>;

/** The order of fields within each kind of key; fields not listed (unknown ones) come first. */
const fieldOrder = {
  api: [
    'api',
    'id',
    'name',
    'auth_type',
    'versioned',
    'version_data',
    'default',
    'endpoints',
    'transform_request_headers',
    'proxy',
    'target_url',
    'port',
    'use_env',
  ],
  auth: ['auth', 'use_header', 'header_name', 'use_query', 'query_name', 'auth_type'],
  endpoint: [
    'endpoint',
    'path',
    'not_secured',
    'id',
    'path_regex',
    'method',
    'path_replacement',
    'secured',
    'auth_type',
    'transform_request_headers',
    'target',
    'response_from',
    'topic',
    'schema',
    'response_timeout',
    'publish_credentials',
  ],
};

const endpointPath = /^\/version_data\/default\/endpoints\/(\d+)(?:\/|$)/;

export class MapBuilder {
  private readonly errors: ValidationErrors = {};
  private readonly api: Record<string, unknown>;

  constructor(input: unknown) {
    this.api = typeof input === 'object' && input !== null && !Array.isArray(input) ? (input as never) : {};
  }

  add(where: string, field: string, message: string): void {
    addError(this.errors, where, { [field]: message });
  }

  /** `<apiId>/<endpointId>`, with what the endpoint has of an id. */
  endpointKey(endpoint: Record<string, unknown>): string {
    return `${this.apiKey()}/${typeof endpoint['id'] === 'string' ? endpoint['id'] : ''}`;
  }

  addSchemaErrors(errors: ErrorObject[]): void {
    const ruled = errors.filter((e) => e.keyword === 'if' && xErrorOf(e, 'if') !== undefined);
    // A type error says all there is about its value; the rest of that value's errors would repeat it.
    const mistyped = new Set(errors.filter((e) => e.keyword === 'type').map((e) => e.instancePath));
    for (const e of errors) {
      if (e.keyword === 'if' && !ruled.includes(e)) continue;
      if (ruled.some((r) => r !== e && inRule(e, r))) continue;
      if (e.keyword !== 'type' && mistyped.has(e.instancePath)) continue;
      for (const problem of problemsOf(e)) this.place(e, problem);
    }
  }

  /** The map with each key's problems in field order, or undefined when there are none. */
  result(): ValidationErrors | undefined {
    const keys = Object.keys(this.errors);
    if (keys.length === 0) return undefined;
    const sorted: ValidationErrors = {};
    for (const key of keys) {
      const order =
        key === 'api' ? fieldOrder.api : key.includes('/') ? fieldOrder.endpoint : fieldOrder.auth;
      const rank = (entry: Record<string, string>) => order.indexOf(Object.keys(entry)[0]!);
      sorted[key] = [...this.errors[key]!].sort((a, b) => rank(a) - rank(b));
    }
    return sorted;
  }

  private place(e: ErrorObject, problem: Problem): void {
    if (problem.at === 'secured endpoints') {
      for (const endpoint of this.endpoints())
        if (endpoint['secured'] === true)
          this.add(this.endpointKey(endpoint), problem.field, problem.message);
      return;
    }
    this.add(
      problem.at === 'auth' ? this.apiKey() : this.whereOf(e.instancePath),
      problem.field,
      problem.message,
    );
  }

  private whereOf(instancePath: string): string {
    if (instancePath === '/auth' || instancePath.startsWith('/auth/')) return this.apiKey();
    const m = endpointPath.exec(instancePath);
    if (!m) return 'api';
    const endpoint = this.endpoints()[Number(m[1])];
    return this.endpointKey(isRecord(endpoint) ? endpoint : {});
  }

  private apiKey(): string {
    return typeof this.api['id'] === 'string' ? this.api['id'] : '';
  }

  private endpoints(): Array<Record<string, unknown>> {
    const version = this.api['version_data'] as Record<string, unknown> | undefined;
    const list = (version?.['default'] as Record<string, unknown> | undefined)?.['endpoints'];
    return Array.isArray(list) ? list.filter(isRecord) : [];
  }
}

export function addError(errors: ValidationErrors, where: string, entry: Record<string, string>): void {
  const list = errors[where];
  if (list === undefined) errors[where] = [entry];
  else list.push(entry);
}

/** The problems one ajv error stands for (a required string that is missing is two, as in RIG). */
function problemsOf(e: ErrorObject): Problem[] {
  const property = propertyOf(e);
  const own = xErrorOf(e, e.keyword) ?? (e.keyword === 'required' ? propertyXError(e, property) : undefined);
  if (own !== undefined) return [own];
  const propertySchema = propertiesOf(e.parentSchema)?.[property];
  const requiredString = (s: Record<string, unknown> | undefined) =>
    s?.['type'] === 'string' && s['minLength'];
  switch (e.keyword) {
    case 'required':
      return requiredString(propertySchema)
        ? [
            { field: property, message: 'must be string' },
            { field: property, message: 'must have a length of at least 1' },
          ]
        : [{ field: property, message: 'must be present' }];
    case 'additionalProperties':
      return [{ field: property, message: 'is not a known field' }];
    case 'type': {
      const type = String(e.params['type']);
      if (type === 'string' && requiredString(e.parentSchema))
        return [
          { field: property, message: 'must be string' },
          { field: property, message: 'must have a length of at least 1' },
        ];
      const names: Record<string, string> = { array: 'list', object: 'an object' };
      return [{ field: property, message: `must be ${names[type] ?? type}` }];
    }
    case 'minLength':
      return [{ field: property, message: `must have a length of at least ${e.params['limit']}` }];
    case 'enum':
      return [{ field: property, message: `must be one of ${JSON.stringify(e.params['allowedValues'])}` }];
    default:
      return [{ field: property, message: e.message ?? 'is invalid' }];
  }
}

/** The field an error is about: the missing or unknown property, else the value's own name. */
function propertyOf(e: ErrorObject): string {
  if (e.keyword === 'required') return String(e.params['missingProperty']);
  if (e.keyword === 'additionalProperties') return String(e.params['additionalProperty']);
  const last = e.instancePath.split('/').pop() ?? '';
  return e.instancePath === '' ? 'api' : last.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** The `x-error` a schema gives for this keyword, as a problem with its placeholders filled in. */
function xErrorOf(e: ErrorObject, keyword: string): Problem | undefined {
  return entryToProblem(e.parentSchema?.['x-error'] as XError | undefined, keyword, e, propertyOf(e));
}

/** A missing property's own `x-error` (its message for any problem, or for `required`). */
function propertyXError(e: ErrorObject, property: string): Problem | undefined {
  const properties = propertiesOf(e.parentSchema);
  return entryToProblem(properties?.[property]?.['x-error'] as XError | undefined, 'required', e, property);
}

type Properties = Record<string, Record<string, unknown>>;

/** A schema's properties, or those of the document's schema it refers to (`ApiDefinition`). */
function propertiesOf(schema: Record<string, unknown> | undefined): Properties | undefined {
  if (schema?.['properties'] !== undefined) return schema['properties'] as Properties;
  const ref = /^#\/components\/schemas\/(\w+)$/.exec(String(schema?.['$ref'] ?? ''));
  return ref ? propertiesOf(internalApiSchema(ref[1]!).schema as Record<string, unknown>) : undefined;
}

function entryToProblem(
  x: XError | undefined,
  keyword: string,
  e: ErrorObject,
  field: string,
): Problem | undefined {
  if (x === undefined) return undefined;
  const entry = typeof x === 'string' ? x : (x[keyword] ?? x['*']);
  if (entry === undefined) return undefined;
  const given = typeof entry === 'string' ? { message: entry } : entry;
  return {
    field: given.field ?? field,
    message: filled(given.message, e),
    ...(given.at !== undefined && { at: given.at }),
  };
}

function filled(message: string, e: ErrorObject): string {
  const data = e.data as Record<string, unknown> | undefined;
  return message
    .replaceAll('{property}', String(e.params['additionalProperty'] ?? ''))
    .replaceAll('{target}', String(isRecord(data) ? (data['target'] ?? 'http') : 'http'))
    .replaceAll('{path_regex_example}', () => JSON.stringify(pathRegexExample(e.data)));
}

/** The migration the 3.0 changelog describes, applied to the `path` the user gave. */
function pathRegexExample(path: unknown): string {
  return typeof path === 'string' ? path.replace(/\{[^}/]*\}/g, '(.+)') : '/foo/(.+)';
}

/** Whether an error comes from inside the `then` of a rule that reports itself as one problem. */
function inRule(e: ErrorObject, rule: ErrorObject): boolean {
  const under = e.instancePath === rule.instancePath || e.instancePath.startsWith(`${rule.instancePath}/`);
  return under && schemasIn(rule.parentSchema?.['then']).has(e.parentSchema as object);
}

/** Every schema object in a subschema, without following $ref (a rule's `then` is small). */
function schemasIn(schema: unknown, found = new Set<object>()): Set<object> {
  if (typeof schema !== 'object' || schema === null || found.has(schema)) return found;
  found.add(schema);
  for (const value of Object.values(schema)) schemasIn(value, found);
  return found;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
