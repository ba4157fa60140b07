/**
 * A function gets the input it declares (defineFunction's `input`, Mercury's input type of
 * TypedLambdaFunction): over HTTP, an endpoint and a flow call one function per kind (fixtures/
 * function-inputs), and each function answers what it received.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type RunningEngine, startEngine } from '../engine-fixture.ts';

const folder = join(import.meta.dirname, '..', 'fixtures', 'function-inputs');
let run: RunningEngine;

before(async () => {
  run = await startEngine({ REST_CONFIG_FOLDER: folder, FUNCTIONS_PATH: join(folder, 'functions') });
});
after(() => run.stop());

// biome-ignore lint/suspicious/noExplicitAny: answers are read by path in assertions
type Seen = Record<string, any>;

/** POSTs a JSON body with an `x-tag` header and a correlation id; the function's report back. */
async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const tag = randomUUID();
  const cid = randomUUID().replaceAll('-', '');
  const res = await fetch(run.base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-tag': tag, 'x-correlation-id': cid, ...headers },
    body: JSON.stringify(body),
  });
  const seen = (await res.json()) as Seen;
  return { status: res.status, seen, tag, cid };
}

const payload = () => ({ name: `n-${randomUUID()}`, count: Math.floor(Math.random() * 1000) });

describe('an endpoint calls a function with the input it declares', () => {
  for (const kind of ['default', 'http-request']) {
    it(`${kind}: the AsyncHttpRequest`, async () => {
      const body = payload();
      const { status, seen, tag } = await post(`/api/input/${kind}/a7?name=${body.name}`, body);
      assert.equal(status, 200, JSON.stringify(seen));
      assert.equal(seen['kind'], 'AsyncHttpRequest');
      assert.equal(seen['method'], 'POST');
      assert.equal(seen['url'], `/api/input/${kind}/a7`);
      assert.equal(seen['tag'], tag);
      assert.equal(seen['id'], 'a7');
      assert.equal(seen['name'], body.name);
      assert.deepEqual(seen['body'], body);
    });
  }

  it('map: the request as a plain map, toMap() keys', async () => {
    const body = payload();
    const { status, seen, tag } = await post(`/api/input/map/b8?q=${body.count}`, body);
    assert.equal(status, 200, JSON.stringify(seen));
    assert.equal(seen['kind'], 'map');
    const map = seen['map'] as Seen;
    assert.equal(map['method'], 'POST');
    assert.equal(map['url'], '/api/input/map/b8');
    assert.equal(map['headers']['x-tag'], tag);
    assert.deepEqual(map['pathParameters'], { id: 'b8' });
    assert.deepEqual(map['queryParameters'], { q: String(body.count) });
    assert.deepEqual(map['body'], body);
  });

  it('envelope: the event headers, the request map as body, route, correlation and trace ids', async () => {
    const body = payload();
    const traceId = randomUUID().replaceAll('-', '');
    const { status, seen, tag, cid } = await post('/api/input/envelope/c9', body, {
      traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
    });
    assert.equal(status, 200, JSON.stringify(seen));
    assert.equal(seen['kind'], 'EventEnvelope');
    assert.deepEqual(seen['headers'], seen['event_headers']);
    assert.equal(seen['headers']['my_route'], 'input.envelope');
    assert.equal(seen['to'], 'input.envelope');
    assert.equal(seen['correlation_id'], cid);
    assert.equal(seen['trace_id'], traceId);
    assert.equal(seen['trace_path'], 'POST /api/input/envelope/c9');
    assert.equal(seen['body']['method'], 'POST');
    assert.equal(seen['body']['headers']['x-tag'], tag);
    assert.deepEqual(seen['body']['pathParameters'], { id: 'c9' });
    assert.deepEqual(seen['body']['body'], body);
  });
});

describe('a flow task calls a function with the input it declares', () => {
  for (const kind of ['default', 'map']) {
    it(`${kind}: the mapped body as a plain map`, async () => {
      const body = payload();
      const { status, seen, tag } = await post(`/api/flow/input/${kind}`, body);
      assert.equal(status, 200, JSON.stringify(seen));
      assert.equal(seen['kind'], 'map');
      assert.deepEqual(seen['map'], body);
      assert.equal(seen['event_headers']['x-tag'], tag);
    });
  }

  it('map: a body that is no map is refused with 400 naming the function', async () => {
    const { status, seen } = await post('/api/flow/input/map/whole-body', [1, 2]);
    assert.equal(status, 400);
    assert.equal(seen['message'], 'Function input.map takes a map; its input is a list');
    const asMap = await post('/api/flow/input/map/whole-body', { whole: 'body' });
    assert.equal(asMap.status, 200, JSON.stringify(asMap.seen));
    assert.deepEqual(asMap.seen['map'], { whole: 'body' });
  });

  it('envelope: the mapped headers with the event headers, the mapped body, route and ids', async () => {
    const body = payload();
    const traceId = randomUUID().replaceAll('-', '');
    const { status, seen, tag, cid } = await post('/api/flow/input/envelope', body, {
      traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
    });
    assert.equal(status, 200, JSON.stringify(seen));
    assert.equal(seen['kind'], 'EventEnvelope');
    assert.deepEqual(seen['body'], body);
    assert.deepEqual(seen['headers'], seen['event_headers']);
    assert.equal(seen['headers']['x-tag'], tag);
    assert.equal(seen['headers']['my_route'], 'input.envelope');
    assert.equal(seen['to'], 'input.envelope');
    assert.equal(seen['correlation_id'], cid);
    assert.equal(seen['trace_id'], traceId);
    assert.equal(seen['trace_path'], 'POST /api/flow/input/envelope');
  });

  it('http-request: an AsyncHttpRequest made of the mapped body', async () => {
    const body = payload();
    const { status, seen, tag } = await post('/api/flow/input/http-request', body);
    assert.equal(status, 200, JSON.stringify(seen));
    assert.equal(seen['kind'], 'AsyncHttpRequest');
    assert.equal(seen['method'], 'PUT');
    assert.equal(seen['url'], '/made/by/the/flow');
    assert.equal(seen['tag'], tag, 'the mapped X-Tag, its name lower-cased');
    assert.equal(seen['name'], body.name);
    assert.deepEqual(seen['body'], body);
  });
});
