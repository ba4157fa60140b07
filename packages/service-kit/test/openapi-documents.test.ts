/**
 * Every host serves the internal API's OpenAPI document at `/swagger.json` and, with a public port,
 * the public edge's at `/_gw/v1/openapi.json`, even one running no service at all: that is what
 * makes them answer on every standalone service. Their content and their agreement with the
 * services are tested in embedded/test/internal-api-document.test.ts and
 * embedded/test/public-edge-document.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { internalApiDocumentPath, publicEdgeDocumentPath, type RunningHost } from '../src/index.ts';
import { startTestHost } from './test-host.ts';

const shipped = readFileSync(new URL('../src/internal-api.openapi.json', import.meta.url), 'utf8');
const shippedEdge = readFileSync(new URL('../src/public-edge.openapi.json', import.meta.url), 'utf8');

/** GET answers the shipped file as JSON: an OpenAPI 3.1 document that describes its own path. */
async function assertServes(url: string, path: string, file: string): Promise<void> {
  const res = await fetch(url);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json\b/);
  const text = await res.text();
  assert.equal(text, file);
  const document = JSON.parse(text) as { openapi: string; paths: Record<string, unknown> };
  assert.match(document.openapi, /^3\.1\.\d+$/);
  assert.ok(document.paths[path], 'the document describes its own path');
}

describe('service host: the internal API document', () => {
  let host: RunningHost;
  let api: string;
  before(async () => {
    host = await startTestHost();
    api = `http://127.0.0.1:${host.apiPort}`;
  });
  after(() => host?.stop());

  it('answers GET /swagger.json with the shipped file as application/json', async () => {
    assert.equal(internalApiDocumentPath, '/swagger.json');
    await assertServes(`${api}/swagger.json`, '/swagger.json', shipped);
  });

  it('answers HEAD with the headers only, and a query string does not matter', async () => {
    const head = await fetch(`${api}/swagger.json`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(Number(head.headers.get('content-length')), Buffer.byteLength(shipped));
    assert.equal(await head.text(), '');
    assert.equal((await fetch(`${api}/swagger.json?v=1`)).status, 200);
  });

  it('is not on the public edge', async () => {
    const edge = await startTestHost({
      publicPort: 0,
    });
    try {
      assert.equal((await fetch(`http://127.0.0.1:${edge.publicPort}/swagger.json`)).status, 404);
    } finally {
      await edge.stop();
    }
  });
});

describe('service host: the public edge document', () => {
  let host: RunningHost;
  let edge: string;
  before(async () => {
    host = await startTestHost({ publicPort: 0 });
    edge = `http://127.0.0.1:${host.publicPort}`;
  });
  after(() => host?.stop());

  it('answers GET /_gw/v1/openapi.json on the public port with the shipped file as application/json', async () => {
    assert.equal(publicEdgeDocumentPath, '/_gw/v1/openapi.json');
    await assertServes(`${edge}/_gw/v1/openapi.json?v=1`, '/_gw/v1/openapi.json', shippedEdge);
  });

  it('answers HEAD with the headers only and other methods 405 with Allow', async () => {
    const head = await fetch(`${edge}/_gw/v1/openapi.json`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(Number(head.headers.get('content-length')), Buffer.byteLength(shippedEdge));
    assert.equal(await head.text(), '');
    const post = await fetch(`${edge}/_gw/v1/openapi.json`, { method: 'POST', body: '{}' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    await post.text();
  });

  it('is not on the internal API', async () => {
    const res = await fetch(`http://127.0.0.1:${host.apiPort}/_gw/v1/openapi.json`);
    assert.equal(res.status, 404);
    await res.text();
  });
});
