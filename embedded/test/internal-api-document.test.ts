/**
 * The internal API's OpenAPI document (packages/service-kit/src/internal-api.openapi.json, served as
 * `/swagger.json`):
 * - it is a valid OpenAPI 3.1 document (openapi-document.ts says what that takes);
 * - it says what the gateway does: against the embedded gateway, every documented path and method,
 *   sent the document's own example request, answers a documented 2xx status with headers and a
 *   body matching that response's description. The correlated-response examples complete a real
 *   request waiting with `response_from: http_async` (their `<correlation id>` is replaced by its id);
 *   the connections API's examples name a live SSE connection (`<connection id>`, one per operation).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { readInternalApiDocument } from '@gatehouse/service-kit';
import { openSse, type SseConnection, waitFor } from '@gatehouse/testkit';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '../src/index.ts';
import {
  checkResponse,
  itIsAValidOpenApiDocument,
  type Json,
  exampleRequest,
  OpenApiDocument,
} from './openapi-document.ts';

const correlationPlaceholder = '<correlation id>';
const connectionPlaceholder = '<connection id>';
const doc = new OpenApiDocument(
  JSON.parse((await readInternalApiDocument()).toString('utf8')) as Json,
  'https://gatehouse.invalid/swagger.json',
);
const document = doc.json;

describe('internal API document: a valid OpenAPI 3.1 document', () => {
  itIsAValidOpenApiDocument(doc, { refs: 50, examples: 20 });
});

describe('internal API document: what the embedded gateway answers', () => {
  let gw: EmbeddedGateway;
  let api: string;
  let edge: string;
  let backend: Server;
  /** Correlation ids the async backend was given, one per request the proxy holds. */
  const correlations: string[] = [];
  const streams: SseConnection[] = [];
  const ajv = doc.schemaValidator();

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
    for (const s of streams) s.close();
    await gw?.stop();
    backend?.close();
  });

  /** The id of a new SSE connection, as the connections API lists it. */
  async function liveConnection(): Promise<string> {
    const type = `doc-example-${streams.length}`;
    const subscriptions = encodeURIComponent(JSON.stringify([{ eventType: type }]));
    streams.push(await openSse(`${edge}/_gw/v1/connection/sse?subscriptions=${subscriptions}`));
    return waitFor(async () => {
      const page = (await (await fetch(`${api}/v3/connections?eventType=${type}`)).json()) as {
        connections: Array<{ id: string }>;
      };
      return page.connections[0]?.id;
    });
  }

  /** A request held by the proxy until its correlated response arrives. */
  async function waitingRequest(): Promise<{ correlation: string; answer: Promise<Response> }> {
    const before = correlations.length;
    const answer = fetch(`${edge}/async-test`, { method: 'POST', body: 'ask' });
    await waitFor(() => correlations.length > before);
    return { correlation: correlations[before]!, answer };
  }

  it('answers every documented path and method, sent its example, with a documented 2xx and a matching body', async () => {
    for (const op of doc.operations()) {
      const where = `${op.method.toUpperCase()} ${op.path}`;
      const request = exampleRequest(doc, op);
      const usesCorrelation = JSON.stringify(request).includes(correlationPlaceholder);
      const waiting = usesCorrelation ? await waitingRequest() : undefined;
      const init: RequestInit = {
        method: op.method.toUpperCase(),
        headers: fill(request.headers, waiting?.correlation),
        ...(request.body !== undefined && { body: fill(request.body, waiting?.correlation) }),
      };
      const connection = request.path.includes(encodeURIComponent(connectionPlaceholder))
        ? await liveConnection()
        : undefined;
      const path = connection
        ? request.path.replace(encodeURIComponent(connectionPlaceholder), connection)
        : request.path;
      const aborter = new AbortController();
      const res = await fetch(`${api}${path}`, { ...init, signal: aborter.signal });
      const status = String(res.status);
      const documented = (op.operation.value['responses'] as Json)[status] as Json | undefined;
      if (documented === undefined || !status.startsWith('2'))
        assert.fail(
          `${where} answered ${status} to its example (documented: ${documented !== undefined}): ${await res.text()}`,
        );
      await checkResponse(
        doc,
        ajv,
        where,
        res,
        doc.locate(documented, `${op.operation.pointer}/responses/${status}`),
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
});

function fill<T extends string | Record<string, string>>(value: T, correlation: string | undefined): T {
  if (correlation === undefined) return value;
  if (typeof value === 'string') return value.replaceAll(correlationPlaceholder, correlation) as T;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, v.replaceAll(correlationPlaceholder, correlation)]),
  ) as T;
}
