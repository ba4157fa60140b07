/**
 * The public edge's OpenAPI document (packages/service-kit/src/public-edge.openapi.json, served as
 * `/_gw/v1/openapi.json`):
 * - it is a valid OpenAPI 3.1 document (openapi-document.ts says what that takes), whose CloudEvent
 *   schemas, `ce-*` parameters and event body are the internal API document's, word for word;
 * - it documents the routes the services have: exactly the `/_gw` paths they claim, the transports
 *   a subscription change takes, and for each path exactly the methods it answers (any other one is
 *   405 with that `Allow`);
 * - it says what the gateway does: against the embedded gateway, every documented operation, sent
 *   the document's own example request, answers a documented status with headers and a body
 *   matching that response; the documented links work (a long-poll connection's cookie token
 *   changes its subscriptions); and the proxy's own answers (404, 401, the preflight, 502, 504, 503)
 *   are what the document describes.
 * The fuzzing against this document is `make fuzz-api` (schemathesis) and public-edge-fuzz.test.ts.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { EVENTS_PATH } from '@gatehouse/publisher';
import {
  ACK_PATH,
  HISTORY_PATH,
  LONGPOLL_PATH,
  PRESENCE_PATH,
  SOCKETIO_PATH,
  SSE_PATH,
  TRANSPORTS,
  WS_PATH,
} from '@gatehouse/push-hub';
import {
  publicEdgeDocumentPath,
  readInternalApiDocument,
  readPublicEdgeDocument,
} from '@gatehouse/service-kit';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '../src/index.ts';
import {
  checkResponse,
  exampleRequest,
  itIsAValidOpenApiDocument,
  type Json,
  type Operation,
  OpenApiDocument,
} from './openapi-document.ts';

const doc = new OpenApiDocument(
  JSON.parse((await readPublicEdgeDocument()).toString('utf8')) as Json,
  'https://gatehouse.invalid/_gw/v1/openapi.json',
);
const internal = new OpenApiDocument(
  JSON.parse((await readInternalApiDocument()).toString('utf8')) as Json,
  'https://gatehouse.invalid/swagger.json',
);
const subscriptionsPath = '/_gw/v1/connection/{transport}/{connectionToken}/subscriptions';
const proxiedPath = '/{proxiedPath}';
/** engine.io's path and the WebSocket path answer methods they do not list their own way (info.description). */
const ownMethodAnswers = new Set([SOCKETIO_PATH, WS_PATH]);

const paths = () => doc.json['paths'] as Record<string, Json>;
const component = (d: OpenApiDocument, kind: string, name: string) =>
  (d.json['components'] as Record<string, Record<string, unknown>>)[kind]![name];

function operation(path: string, method: Operation['method']): Operation {
  const found = doc.operations().find((o) => o.path === path && o.method === method);
  assert.ok(found, `${method.toUpperCase()} ${path} is documented`);
  return found;
}

describe('public edge document: a valid OpenAPI 3.1 document', () => {
  itIsAValidOpenApiDocument(doc, { refs: 80, examples: 10 });

  it("shares the CloudEvent schemas, the ce-* parameters and the event body with the internal API's", () => {
    const shared = {
      schemas: ['CloudEvent', 'CloudEventV1', 'CloudEventV02', 'GwExtension', 'HostError'],
      parameters: ['CeSpecversion', 'CeId', 'CeType', 'CeSource', 'CeTime', 'CeSubject'],
      requestBodies: ['Event'],
      headers: ['RetryAfter'],
    };
    for (const [kind, names] of Object.entries(shared))
      for (const name of names)
        assert.deepEqual(component(doc, kind, name), component(internal, kind, name), `${kind}/${name}`);
  });
});

describe('public edge document: the routes of the services', () => {
  it('documents exactly the /_gw paths the services claim', () => {
    const documented = Object.keys(paths())
      .filter((p) => p.startsWith('/_gw/'))
      .sort();
    const routed = [
      '/_gw/health',
      publicEdgeDocumentPath,
      SSE_PATH,
      PRESENCE_PATH,
      HISTORY_PATH,
      ACK_PATH,
      WS_PATH,
      LONGPOLL_PATH,
      subscriptionsPath,
      EVENTS_PATH,
      SOCKETIO_PATH,
    ].sort();
    assert.deepEqual(documented, routed);
    assert.ok(paths()[proxiedPath], 'every other path: the reverse proxy');
  });

  it('takes the transports the subscriptions endpoint routes', () => {
    const transport = operation(subscriptionsPath, 'put').parameters.find((p) => p['name'] === 'transport');
    assert.ok(transport, 'the transport is a path parameter');
    assert.deepEqual((transport['schema'] as Json)['enum'], [...TRANSPORTS]);
  });
});

describe('public edge document: what the embedded gateway answers', () => {
  let gw: EmbeddedGateway;
  let edge: string;
  let api: string;
  /** A target that takes requests and never answers (the proxy's 504). */
  let silent: Server;
  const held: IncomingMessage[] = [];
  const ajv = doc.schemaValidator();

  before(async () => {
    gw = await startEmbeddedGateway({ ...ephemeralGatewaySettings, LONGPOLL_TIMEOUT: '1s' });
    edge = `http://127.0.0.1:${gw.publicPort}`;
    api = `http://127.0.0.1:${gw.apiPort}`;
    silent = createServer((req) => held.push(req));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  });
  after(async () => {
    for (const req of held) req.socket.destroy();
    silent?.close();
    await gw?.stop();
  });

  /** The answer checked against the response its operation documents for its status. */
  async function checkAnswer(op: Operation, res: Response, aborter = new AbortController()) {
    const where = `${op.method.toUpperCase()} ${op.path}`;
    const status = String(res.status);
    const response = doc.responses(op).get(status) ?? doc.responses(op).get('default');
    if (response === undefined)
      assert.fail(`${where} answered ${status} (not documented): ${await res.text()}`);
    await checkResponse(doc, ajv, `${where} ${status}`, res, response, aborter, op.method === 'head');
  }

  it('answers GET /_gw/v1/openapi.json with the document', async () => {
    const res = await fetch(`${edge}/_gw/v1/openapi.json`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json\b/);
    assert.deepEqual(await res.json(), doc.json);
  });

  it('answers every documented operation, sent its example, with a documented status, headers and body', async () => {
    let checked = 0;
    for (const op of doc.operations()) {
      const request = exampleRequest(doc, op);
      const aborter = new AbortController();
      const res = await fetch(`${edge}${request.path}`, {
        method: op.method.toUpperCase(),
        headers: request.headers,
        ...(request.body !== undefined && { body: request.body }),
        signal: aborter.signal,
      });
      await checkAnswer(op, res, aborter);
      checked++;
    }
    assert.ok(checked >= 20, `${checked} operations`);
  });

  it('answers a path parameter spelled with a refused escape (the canonical path) with a documented status', async () => {
    let checked = 0;
    for (const op of doc.operations()) {
      if (!op.path.includes('{') || op.path === '/_gw/v1/connection/ws') continue;
      // An encoded slash in every parameter: the edge refuses it before any route reads the path.
      const path = op.path.replace(/\{[^}]+\}/g, 'a%2Fb');
      const res = await fetch(`${edge}${path}`, { method: op.method.toUpperCase() });
      assert.equal(res.status, 400, `${op.method.toUpperCase()} ${path}`);
      await checkAnswer(op, res);
      checked++;
    }
    assert.ok(checked >= 8, `${checked} operations`);
  });

  it('answers a method a /_gw path does not document with 405 and an Allow naming the documented ones', async () => {
    for (const [path, item] of Object.entries(paths())) {
      if (!path.startsWith('/_gw/') || ownMethodAnswers.has(path)) continue;
      const documented = new Set(
        Object.keys(item)
          .filter((k) => k !== 'parameters')
          .map((m) => m.toUpperCase()),
      );
      // The host's read-only paths answer HEAD too (info.description).
      if ((item['get'] as Json | undefined)?.['tags']?.toString() === 'operations') documented.add('HEAD');
      const url = `${edge}${path.replace('{transport}', 'sse').replace('{connectionToken}', 'token')}`;
      for (const method of ['GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']) {
        if (documented.has(method)) continue;
        const res = await fetch(url, {
          method,
          ...(['PUT', 'POST', 'PATCH'].includes(method) && { body: '{}' }),
        });
        await res.text();
        assert.equal(res.status, 405, `${method} ${path}`);
        const allow = new Set((res.headers.get('allow') ?? '').split(',').map((m) => m.trim()));
        assert.deepEqual(allow, documented, `${method} ${path}: Allow`);
      }
    }
  });

  it('routes a subscription change of every documented transport, and no other', async () => {
    const put = operation(subscriptionsPath, 'put');
    const change = (transport: string) =>
      fetch(`${edge}/_gw/v1/connection/${transport}/not-a-token/subscriptions`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: '{"subscriptions":[]}',
      });
    for (const transport of TRANSPORTS) {
      const res = await change(transport);
      assert.equal(res.status, 400, transport);
      assert.equal(await res.clone().text(), 'Invalid connection token.');
      await checkAnswer(put, res);
    }
    const other = await change('carrier-pigeon');
    assert.equal(other.status, 404);
    await checkAnswer(put, other);
  });

  it("follows the documented links: a long-poll connection's cookie token changes its subscriptions, its next poll gets them", async () => {
    const connect = operation(LONGPOLL_PATH, 'get');
    const links = (doc.responses(connect).get('200')!.value['links'] ?? {}) as Record<string, Json>;
    const fromCookie = (link: Json, parameter: string) => {
      const expression = String((link['parameters'] as Json)[parameter]);
      const [source, pattern] = expression.split('#regex:') as [string, string];
      assert.equal(source, '$response.header.Set-Cookie');
      return (setCookies: string[]) => new RegExp(pattern).exec(setCookies[0] ?? '')?.[1];
    };
    const change = links['ChangeSubscriptions']!;
    assert.equal(change['operationId'], operation(subscriptionsPath, 'put').operation.value['operationId']);
    const tokenOf = fromCookie(change, 'path.connectionToken');

    const created = await fetch(`${edge}${LONGPOLL_PATH}`);
    await checkAnswer(connect, created);
    const token = tokenOf(created.headers.getSetCookie());
    assert.ok(token, 'the token comes out of the first Set-Cookie');

    const transport = String((change['parameters'] as Json)['path.transport']);
    const changed = await fetch(`${edge}/_gw/v1/connection/${transport}/${token}/subscriptions`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ subscriptions: [{ eventType: 'linked.greeting' }] }),
    });
    assert.equal(changed.status, 204, await changed.clone().text());
    await checkAnswer(operation(subscriptionsPath, 'put'), changed);

    const pollLink = (
      doc.responses(operation(subscriptionsPath, 'put')).get('204')!.value['links'] as Record<string, Json>
    )['Poll']!;
    assert.deepEqual(pollLink['parameters'], { 'cookie.connection_token': '$request.path.connectionToken' });
    const polled = await fetch(`${edge}${LONGPOLL_PATH}`, {
      headers: { cookie: `connection_token=${token}` },
    });
    const answer = (await polled.clone().json()) as { events: Array<{ type: string; data: unknown }> };
    await checkAnswer(connect, polled);
    const set = answer.events.filter((e) => e.type === 'gw.subscriptions_set').at(-1);
    assert.deepEqual(set?.data, [{ eventType: 'linked.greeting', oneOf: [] }]);
  });

  it("describes the proxy's own answers: no route, a secured route, its preflight, an unreachable or silent target, a target kind it does not run", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const definition = (id: string, endpoint: Json, port: number) => ({
      id,
      name: id,
      auth_type: 'jwt',
      version_data: { default: { endpoints: [{ id: `${id}-endpoint`, ...endpoint }] } },
      proxy: { target_url: '127.0.0.1', port },
    });
    const silentPort = (silent.address() as AddressInfo).port;
    for (const body of [
      definition('doc-secured', { method: 'GET', path_regex: '/doc-secured', secured: true }, closedPort),
      definition('doc-down', { method: 'GET', path_regex: '/doc-down' }, closedPort),
      definition(
        'doc-silent',
        { method: 'GET', path_regex: '/doc-silent', response_timeout: 300 },
        silentPort,
      ),
      definition(
        'doc-kafka',
        { method: 'POST', path_regex: '/doc-kafka', target: 'kafka', topic: 'x' },
        closedPort,
      ),
    ]) {
      const res = await fetch(`${api}/v3/apis`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(res.status, 201, await res.text());
    }
    const cases: Array<[Operation['method'], string, number]> = [
      ['get', '/nowhere', 404],
      ['get', '/doc-secured', 401],
      ['options', '/doc-secured', 204],
      ['get', '/doc-down', 502],
      ['get', '/doc-silent', 504],
      ['post', '/doc-kafka', 503],
    ];
    for (const [method, path, status] of cases) {
      const res = await fetch(`${edge}${path}`, { method: method.toUpperCase() });
      assert.equal(res.status, status, `${method.toUpperCase()} ${path}: ${await res.clone().text()}`);
      await checkAnswer(operation(proxiedPath, method), res);
    }
  });
});
