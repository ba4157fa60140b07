/** HTTP tests against the running engine serving the example app (examples/rest-app). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '@gatehouse/testkit';
import { type RunningEngine, freePort, startEngine } from './engine-fixture.ts';

let run: RunningEngine;
let base: string;

before(async () => {
  // A fixed port, because the example's relay endpoint forwards to the engine itself.
  run = await startEngine({ REST_SERVER_PORT: String(await freePort()) });
  base = run.base;
});
after(() => run.stop());

const get = (path: string, headers: Record<string, string> = {}) => fetch(base + path, { headers });
// biome-ignore lint/suspicious/noExplicitAny: response bodies are read by path in assertions
type Body = Record<string, any>;
const json = async (res: Response) => (await res.json()) as Body;

/** A raw request, for paths fetch would normalise and headers it would add. */
function raw(method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>(
    (resolve, reject) => {
      const req = httpRequest(`${base}${path}`, { method, headers }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      });
      req.on('error', reject);
      req.end(body);
    },
  );
}

describe('URL matching', () => {
  it('serves a declared GET with a small JSON body', async () => {
    const res = await get('/api/hello/world');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.deepEqual(await res.json(), { hello: 'world' });
  });

  it('prefers the exact url over a wildcard, and the wildcard takes deeper paths', async () => {
    assert.deepEqual(await json(await get('/api/files/readme')), { hello: 'world' });
    const deep = await json(await get('/api/files/a/b/c.txt'));
    assert.equal(deep['url'], '/api/files/a/b/c.txt');
  });

  it('matches without regard to case and trailing slashes, and hands path variables over', async () => {
    assert.deepEqual(await json(await get('/API/Files/README/')), { hello: 'world' });
    const body = await json(await get('/api/Orders/A-1/items/b%3F2/'));
    assert.deepEqual(body['path_parameters'], { orderId: 'A-1', itemId: 'b?2' });
    // An encoded / has no canonical form (canonical-request.test.ts).
    assert.equal((await get('/api/Orders/A-1/items/b%2F2/')).status, 400);
  });

  it('answers 404 for an unknown path and 405 with Allow for a known path with another method', async () => {
    const missing = await get('/api/nothing');
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { message: 'Resource not found', type: 'error', status: 404 });
    const wrong = await fetch(`${base}/api/hello/world`, { method: 'DELETE' });
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get('allow'), 'GET');
    assert.deepEqual(await wrong.json(), { message: 'Method not allowed', type: 'error', status: 405 });
  });

  it('answers HEAD only where it is declared', async () => {
    const declared = await raw('HEAD', '/api/echo/1');
    assert.equal(declared.status, 200);
    assert.equal(declared.body, '');
    assert.ok(Number(declared.headers['content-length']) > 0);
    assert.equal((await raw('HEAD', '/api/hello/world')).status, 405);
  });
});

describe('CORS', () => {
  it('answers an OPTIONS preflight from the endpoint CORS set', async () => {
    const res = await fetch(`${base}/api/echo/1`, { method: 'OPTIONS' });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.equal(res.headers.get('access-control-max-age'), '86400');
    assert.match(res.headers.get('access-control-allow-methods') ?? '', /PATCH/);
  });

  it('adds the CORS headers to actual responses, and refuses OPTIONS without a CORS set', async () => {
    const res = await get('/api/echo/1');
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.match(res.headers.get('access-control-allow-methods') ?? '', /PATCH/);
    assert.equal(res.headers.get('access-control-max-age'), null);
    assert.equal((await fetch(`${base}/api/hello/world`, { method: 'OPTIONS' })).status, 405);
    assert.equal((await fetch(`${base}/api/none`, { method: 'OPTIONS' })).status, 404);
  });
});

describe('request data', () => {
  it('gives query parameters with repeated keys, cookies and the request line', async () => {
    const body = await json(
      await get('/api/echo/42?tag=a&tag=b&q=x+y', {
        cookie: 'session=abc; theme=dark; enc=a%20b; quoted="q1"; bad name=1; session=again',
      }),
    );
    assert.deepEqual(body['query'], { tag: ['a', 'b'], q: 'x y' });
    assert.equal(body['query_string'], 'tag=a&tag=b&q=x+y');
    // As Mercury: values as sent (no %-decoding), quotes off, invalid pairs dropped, first one wins.
    assert.deepEqual(body['cookies'], { session: 'abc', theme: 'dark', enc: 'a%20b', quoted: 'q1' });
    assert.equal(body['headers']['cookie'], undefined);
    assert.equal(body['method'], 'GET');
    assert.equal(body['url'], '/api/echo/42');
    assert.equal(body['ip'], '127.0.0.1');
    assert.deepEqual(body['path_parameters'], { id: '42' });
    assert.equal(body['event_headers']['my_route'], 'hello.echo');
    assert.ok(body['instance'] >= 1);
  });

  it('keeps query and form keys named like prototype members as data', async () => {
    const query = '__proto__=a&__proto__=b&toString=x&constructor=y&hasOwnProperty=z';
    const expected = { ['__proto__']: ['a', 'b'], toString: 'x', constructor: 'y', hasOwnProperty: 'z' };
    assert.equal(
      JSON.stringify((await json(await get(`/api/echo/1?${query}`)))['query']),
      JSON.stringify(expected),
    );
    const form = await fetch(`${base}/api/echo/1`, {
      method: 'POST',
      body: query,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(JSON.stringify((await json(form))['query']), JSON.stringify(expected));
    assert.equal(({} as Record<string, unknown>)['a'], undefined);
  });

  const post = (body: NonNullable<RequestInit['body']>, type?: string, path = '/api/echo/1') =>
    fetch(base + path, { method: 'POST', body, headers: type ? { 'content-type': type } : {} }).then(json);

  it('parses JSON objects and arrays', async () => {
    const obj = await post('{"name":"pen","qty":2}', 'application/json');
    assert.equal(obj['body_type'], 'object');
    assert.deepEqual(obj['body'], { name: 'pen', qty: 2 });
    assert.equal(obj['content_length'], 22);
    const list = await post('[1,2,3]', 'application/json; charset=utf-8');
    assert.equal(list['body_type'], 'list');
    assert.deepEqual(list['body'], [1, 2, 3]);
  });

  it('parses XML into a map, or keeps it raw on request', async () => {
    const xml = '<order id="7"><item>pen</item><qty>2</qty></order>';
    assert.deepEqual((await post(xml, 'application/xml'))['body'], { id: '7', item: 'pen', qty: '2' });
    const rawXml = await fetch(`${base}/api/echo/1`, {
      method: 'POST',
      body: xml,
      headers: { 'content-type': 'application/xml', 'x-raw-xml': 'true' },
    }).then(json);
    assert.equal(rawXml['body'], xml);
  });

  it('merges form fields into the query parameters', async () => {
    const res = await fetch(`${base}/api/echo/1?a=1`, {
      method: 'POST',
      body: new URLSearchParams({ b: '2', c: 'x y' }),
    });
    const body = await json(res);
    assert.deepEqual(body['query'], { a: '1', b: '2', c: 'x y' });
  });

  it('gives text as a string and anything else as bytes', async () => {
    const text = await post('hello there', 'text/plain');
    assert.equal(text['body_type'], 'string');
    assert.equal(text['body'], 'hello there');
    const bytes = await post(new Uint8Array([0, 1, 2, 255]), 'application/octet-stream');
    assert.equal(bytes['body_type'], 'bytes');
    assert.equal(bytes['body'], Buffer.from([0, 1, 2, 255]).toString('base64'));
  });

  it('hands a body without content length over as a stream', async () => {
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode('part one, '));
        c.enqueue(new TextEncoder().encode('part two'));
        c.close();
      },
    });
    const res = await fetch(`${base}/api/stream`, {
      method: 'POST',
      body: stream,
      headers: { 'content-type': 'application/octet-stream' },
      duplex: 'half',
    } as RequestInit);
    const body = await json(res);
    assert.equal(body['streamed'], true);
    assert.equal(body['text'], 'part one, part two');
    assert.match(body['stream_route'], /^stream\./);
  });

  it('accepts multipart uploads on an upload endpoint', async () => {
    const form = new FormData();
    form.append('note', 'first upload');
    form.append('file', new Blob(['hello file'], { type: 'text/plain' }), 'hello.txt');
    form.append(
      'file',
      new Blob([new Uint8Array([1, 2, 3])], { type: 'application/octet-stream' }),
      'data.bin',
    );
    const body = await json(await fetch(`${base}/api/upload`, { method: 'POST', body: form }));
    assert.deepEqual(
      body['files'].map((f: Record<string, unknown>) => [f['name'], f['type'], f['size']]),
      [
        ['hello.txt', 'text/plain', 10],
        ['data.bin', 'application/octet-stream', 3],
      ],
    );
    assert.equal(body['files'][0]['text'], 'hello file');
    assert.deepEqual(body['query'], { note: 'first upload' });
    assert.equal(body['stream'], true);
  });

  it('answers 400 naming MAX_JSON_DEPTH to a JSON or XML body nested deeper, to functions and flows', async () => {
    const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const send = (path: string, body: string, type: string) =>
      fetch(base + path, { method: 'POST', body, headers: { 'content-type': type } });
    const within = await send('/api/echo/1', nested(128), 'application/json');
    assert.equal(within.status, 200);
    const xmlOf = (depth: number) => `<r>${'<a>'.repeat(depth)}x${'</a>'.repeat(depth)}</r>`;
    assert.equal((await send('/api/echo/1', xmlOf(100), 'application/xml')).status, 200);
    for (const [path, body, type] of [
      ['/api/echo/1', nested(129), 'application/json'],
      ['/api/echo/1', `{"a":${nested(10_000)}}`, 'application/json'],
      ['/api/echo/1', xmlOf(200), 'application/xml'],
      ['/api/echo/1', xmlOf(10_000), 'text/xml'],
      ['/api/flow/greetings/Peter', `{"a":${nested(10_000)}}`, 'application/json'],
    ] as const) {
      const res = await send(path, body, type);
      assert.equal(res.status, 400, `${path} ${type} ${body.length}`);
      assert.match(
        (await json(res))['message'],
        /^the body nests objects and arrays deeper than MAX_JSON_DEPTH \(128\) levels/,
      );
    }
  });

  it('answers 413 to a body over the configured limit, declared or streamed', async () => {
    const big = new Uint8Array(1_048_577);
    const declared = await fetch(`${base}/api/echo/1`, {
      method: 'POST',
      body: big,
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(declared.status, 413);
    assert.match((await json(declared))['message'], /exceeds the limit of 1048576 bytes/);
    const chunks = new ReadableStream({
      start(c) {
        for (let i = 0; i < 5; i++) c.enqueue(new Uint8Array(300_000));
        c.close();
      },
    });
    const streamed = await fetch(`${base}/api/stream`, {
      method: 'POST',
      body: chunks,
      headers: { 'content-type': 'application/octet-stream' },
      duplex: 'half',
    } as RequestInit).catch((err: Error) => err);
    // The engine answers 413 and closes; a client still sending may see the reset instead.
    if (streamed instanceof Response) assert.equal(streamed.status, 413);
  });
});

describe('header transformation', () => {
  it('drops, adds and protects request headers (names compared without case)', async () => {
    const body = await json(
      await get('/api/echo/1', { 'X-Drop-Me': 'x', 'Upgrade-Insecure-Requests': '1', 'X-Keep': 'k' }),
    );
    assert.equal(body['headers']['x-drop-me'], undefined);
    assert.equal(body['headers']['upgrade-insecure-requests'], undefined);
    assert.equal(body['headers']['x-keep'], 'k');
    assert.equal(body['headers']['x-added-by'], 'gatehouse');
    const posted = await json(
      await fetch(`${base}/api/echo/1`, {
        method: 'POST',
        body: '{"a":1}',
        headers: { 'content-type': 'application/json' },
      }),
    );
    assert.equal(posted['headers']['content-type'], 'application/json', 'content-type is essential');
    assert.deepEqual(posted['body'], { a: 1 });
  });

  it('transforms function response headers and never exposes trace headers', async () => {
    const res = await get('/api/headers');
    assert.equal(res.headers.get('x-custom'), 'kept');
    assert.equal(res.headers.get('x-internal'), null);
    assert.equal(res.headers.get('trace_id'), null);
    assert.equal(res.headers.get('strict-transport-security'), 'max-age=31536000');
    assert.equal(res.headers.get('cache-control'), 'no-cache, no-store');
    assert.deepEqual(await res.json(), { ok: true });
  });

  it('honours content-type and set-cookie from the function', async () => {
    const res = await get('/api/cookies', { cookie: 'name=ann' });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.deepEqual(res.headers.getSetCookie(), ['session=abc123; Path=/; HttpOnly', 'theme=dark; Path=/']);
    assert.equal(await res.text(), '<p>hello ann</p>');
  });
});

describe('authentication', () => {
  it('answers 401 when the authentication function rejects', async () => {
    const res = await get('/api/secure/hello', { authorization: 'Bearer wrong' });
    assert.equal(res.status, 401);
    assert.deepEqual(await res.json(), { message: 'Unauthorized', type: 'error', status: 401 });
    assert.ok(res.headers.get('x-correlation-id'));
  });

  it('passes the session information of an accepted request to the target', async () => {
    const body = await json(await get('/api/secure/hello', { authorization: 'Bearer demo' }));
    assert.deepEqual(body['session'], { user: 'demo', role: 'reader' });
  });

  it('uses the status of an AppException thrown by the authentication function', async () => {
    const res = await get('/api/secure/hello', { authorization: 'Bearer blocked' });
    assert.equal(res.status, 403);
    assert.equal((await json(res))['message'], 'This account is blocked');
  });

  it('picks the authentication route by request header', async () => {
    assert.equal((await get('/api/secure/by-header', { authorization: 'Bearer demo' })).status, 401);
    const ok = await get('/api/secure/by-header', { authorization: 'Bearer demo', 'x-app-name': 'demo' });
    assert.equal(ok.status, 200);
  });
});

describe('functions', () => {
  it('sends a copy to the secondary route and ignores its answer', async () => {
    const res = await fetch(`${base}/api/audit`, {
      method: 'POST',
      body: '{"order":17}',
      headers: { 'content-type': 'application/json', 'x-correlation-id': 'audit-cid-1' },
    });
    assert.equal(res.status, 200);
    assert.deepEqual((await json(res))['body'], { order: 17 });
    let last: Body = {};
    for (let i = 0; i < 50 && last['correlationId'] !== 'audit-cid-1'; i++) {
      last = await json(await get('/api/audit/last'));
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.deepEqual(last['body'], { order: 17 });
    assert.equal(last['correlationId'], 'audit-cid-1');
  });

  it('answers 408 at the endpoint timeout, not later', async () => {
    const started = performance.now();
    // A handler of 10 s, far above the 1 s timeout: an answer that waited for it is told apart
    // on a loaded machine (the test waits for the timeout only).
    const res = await get('/api/slow?ms=10000');
    const elapsed = performance.now() - started;
    assert.equal(res.status, 408);
    assert.deepEqual(await res.json(), { message: 'Timeout for 1 seconds', type: 'error', status: 408 });
    assert.ok(elapsed >= 950 && elapsed < 5000, `answered after ${elapsed} ms`);
  });

  it('answers in time when the function is fast enough', async () => {
    assert.deepEqual(await json(await get('/api/slow?ms=50')), { waited: 50 });
  });

  it('renders an AppException as an error body in JSON, XML or HTML by Accept', async () => {
    const asJson = await get('/api/error/409?message=Already%20there');
    assert.equal(asJson.status, 409);
    assert.deepEqual(await asJson.json(), { message: 'Already there', type: 'error', status: 409 });
    const asXml = await get('/api/error/409?message=a<b', { accept: 'application/xml' });
    assert.equal(asXml.headers.get('content-type'), 'application/xml');
    assert.match(
      await asXml.text(),
      /<message>a&lt;b<\/message>\n {2}<status>409<\/status>\n {2}<type>error<\/type>/,
    );
    const asHtml = await get('/api/error/422?message=%3Cscript%3Ex%3C/script%3E', {
      accept: 'text/html,*/*;q=0.8',
    });
    assert.equal(asHtml.headers.get('content-type'), 'text/html; charset=utf-8');
    const page = await asHtml.text();
    assert.match(page, /HTTP-422/);
    assert.match(page, /&lt;script&gt;x&lt;\/script&gt;/);
  });

  it('answers 500 with the message of an unexpected error', async () => {
    const res = await get('/api/error/500?message=boom');
    assert.equal(res.status, 500);
    assert.deepEqual(await res.json(), { message: 'boom', type: 'error', status: 500 });
  });

  it('relays to another server with the url rewritten', async () => {
    const res = await get('/api/relay/hello/world?x=1');
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { hello: 'world' });
  });
});

describe('correlation and tracing', () => {
  it('echoes the caller correlation id, or makes one up', async () => {
    const given = await get('/api/echo/1', { 'X-Correlation-Id': 'my-cid-7' });
    assert.equal(given.headers.get('x-correlation-id'), 'my-cid-7');
    assert.equal((await json(given))['event_headers']['my_correlation_id'], 'my-cid-7');
    const made = await get('/api/hello/world');
    assert.match(made.headers.get('x-correlation-id') ?? '', /^[0-9a-f]{32}$/);
  });

  it('uses the per-endpoint correlation and trace headers', async () => {
    const res = await get('/api/traced/1', {
      'X-Request-Id': 'rid-1',
      'x-request-trace': 'legacy-trace-0001',
    });
    assert.equal(res.headers.get('x-request-id'), 'rid-1');
    assert.equal(res.headers.get('x-request-trace'), null, 'the trace id is not echoed');
    const body = await json(res);
    assert.equal(body['event_headers']['my_trace_id'], 'legacy-trace-0001');
    assert.equal(body['event_headers']['my_trace_path'], 'GET /api/traced/1');
  });

  it('lets a W3C traceparent win for the trace id', async () => {
    const res = await get('/api/traced/2?a=1', {
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      'x-request-trace': 'legacy',
    });
    const body = await json(res);
    assert.equal(body['event_headers']['my_trace_id'], '0af7651916cd43dd8448eb211c80319c');
    assert.equal(body['event_headers']['my_trace_path'], 'GET /api/traced/2?a=1');
  });

  it('writes one trace record per function of a traced request, to the log and as spans', async () => {
    run.spans.reset();
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await get('/api/secure/hello', {
      authorization: 'Bearer demo',
      traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
    });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    const records = run.logs
      .map((l) => l['trace'] as Body | undefined)
      .filter((t): t is Body => t?.['id'] === traceId);
    assert.deepEqual(
      records.map((r) => [r['service'], r['from'], r['status'], r['success']]),
      [
        ['v1.api.auth', 'http.request', 200, true],
        ['hello.echo', 'v1.api.auth', 200, true],
        ['async.http.response', 'hello.echo', 200, true],
      ],
    );
    for (const r of records) {
      assert.equal(r['path'], 'GET /api/secure/hello');
      assert.match(r['origin'], /^rest-example-/);
      assert.match(r['start'], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(typeof r['exec_time'], 'number');
      assert.match(r['span_id'], /^[0-9a-f]{16}$/);
    }
    assert.equal(typeof records[0]!['round_trip'], 'number');
    assert.equal(records[1]!['round_trip'], undefined);
    assert.equal(records[0]!['parent_span_id'], '00f067aa0ba902b7');
    assert.equal(records[1]!['parent_span_id'], records[0]!['span_id']);

    const spans = run.spans.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    assert.deepEqual(spans.map((s) => s.name).sort(), ['async.http.response', 'hello.echo', 'v1.api.auth']);
    const auth = spans.find((s) => s.name === 'v1.api.auth')!;
    assert.equal(auth.parentSpanContext?.spanId, '00f067aa0ba902b7');
    assert.equal(auth.spanContext().spanId, records[0]!['span_id']);
  });

  it('traces only endpoints with tracing: true: one without it writes no trace record and no span', async () => {
    run.spans.reset();
    const ids = { untraced: randomUUID().replaceAll('-', ''), traced: randomUUID().replaceAll('-', '') };
    const call = async (path: string, traceId: string) => {
      const res = await get(path, {
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
        'x-trace-id': traceId,
      });
      assert.equal(res.status, 200);
      return json(res);
    };
    // The same function (hello.echo) behind both: only the endpoint's `tracing` differs.
    const untraced = await call('/api/echo/untraced', ids.untraced);
    const traced = await call('/api/traced/traced', ids.traced);
    const recordsOf = (id: string) =>
      run.logs.map((l) => l['trace'] as Body | undefined).filter((t): t is Body => t?.['id'] === id);
    const spansOf = (id: string) =>
      run.spans.getFinishedSpans().filter((s) => s.spanContext().traceId === id);
    await waitFor(() => recordsOf(ids.traced).length === 2 && spansOf(ids.traced).length === 2);
    assert.deepEqual(
      recordsOf(ids.traced)
        .map((r) => r['service'])
        .sort(),
      ['async.http.response', 'hello.echo'],
    );
    assert.equal(traced['event_headers']['my_trace_id'], ids.traced);

    assert.deepEqual(recordsOf(ids.untraced), []);
    assert.deepEqual(spansOf(ids.untraced), []);
    const anyRecordOfPath = run.logs.some(
      (l) => (l['trace'] as Body | undefined)?.['path'] === 'GET /api/echo/untraced',
    );
    assert.equal(anyRecordOfPath, false, 'no trace record under a trace id of its own either');
    assert.equal(untraced['event_headers']['my_trace_id'], undefined);
    assert.equal(untraced['event_headers']['my_trace_path'], undefined);
  });

  it('traces the secondary route too', async () => {
    const res = await fetch(`${base}/api/audit`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json', 'x-trace-id': 'audit-trace-1' },
    });
    await res.arrayBuffer();
    await new Promise((r) => setTimeout(r, 50));
    const services = run.logs
      .map((l) => l['trace'] as Body | undefined)
      .filter((t): t is Body => t?.['id'] === 'audit-trace-1')
      .map((t) => t['service']);
    assert.deepEqual(services.sort(), ['async.http.response', 'hello.audit', 'hello.echo']);
  });
});

describe('static content', () => {
  it('serves index.html for / as a no-cache page, with the filter headers', async () => {
    const res = await get('/');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(res.headers.get('cache-control'), 'no-cache, no-store');
    assert.equal(res.headers.get('pragma'), 'no-cache');
    assert.equal(res.headers.get('etag'), null);
    assert.equal(res.headers.get('x-filter'), 'demo');
    assert.match(await res.text(), /<h1>Gatehouse REST engine<\/h1>/);
  });

  it('serves files with content types, a strong ETag and 304', async () => {
    const css = await get('/assets/style.css');
    assert.equal(css.headers.get('content-type'), 'text/css; charset=utf-8');
    const etag = css.headers.get('etag')!;
    assert.match(etag, /^"[0-9a-f]{64}"$/);
    const again = await get('/assets/style.css', { 'if-none-match': etag });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), '');
    assert.equal((await get('/assets/app.js')).headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.match(await (await get('/docs/')).text(), /<h1>Docs<\/h1>/);
    assert.match(await (await get('/about')).text(), /<h1>About<\/h1>/);
  });

  it('redirects and rejects as the filter says', async () => {
    const redirect = await fetch(`${base}/protected.html`, { redirect: 'manual' });
    assert.equal(redirect.status, 302);
    assert.equal(redirect.headers.get('location'), '/login.html');
    const allowed = await get('/protected.html', { cookie: 'session=1' });
    assert.equal(allowed.status, 200);
    assert.equal(allowed.headers.get('x-frame-options'), 'DENY');
    const forbidden = await get('/forbidden.html');
    assert.equal(forbidden.status, 403);
    assert.deepEqual(await forbidden.json(), {
      message: 'This page is not for you',
      type: 'error',
      status: 403,
    });
    const excluded = await get('/login.html');
    assert.equal(excluded.headers.get('x-filter'), null);
  });

  it('refuses path traversal', async () => {
    // Dot segments never climb above the root (canonical-path.ts): these name /rest.yaml, not there.
    for (const path of ['/../rest.yaml', '/%2e%2e/rest.yaml', '/assets/../../rest.yaml']) {
      const res = await raw('GET', path);
      assert.equal(res.status, 404, path);
    }
    // Encoded separators have no canonical form.
    for (const path of ['/assets/..%2f..%2frest.yaml', '/..%5c..%5crest.yaml']) {
      const res = await raw('GET', path);
      assert.equal(res.status, 400, path);
    }
    assert.equal((await get('/missing.css')).status, 404);
  });
});

describe('actuators', () => {
  it('answers /health, /info and /livenessprobe', async () => {
    assert.deepEqual((await json(await get('/health')))['status'], 'UP');
    const info = await json(await get('/info'));
    assert.deepEqual(info['app'], {
      name: 'rest-example',
      version: '0.1.0',
      description: 'Example functions, rest.yaml and static content',
    });
    assert.equal(await (await get('/livenessprobe')).text(), 'OK');
  });
});

describe('metrics', () => {
  it('counts answers by status and function calls by outcome', async () => {
    await get('/api/hello/world');
    await get('/api/error/500');
    const text = await run.registry.metrics();
    assert.match(text, /^gw_rest_requests_total\{status="200"\} \d+$/m);
    assert.match(text, /^gw_rest_requests_total\{status="500"\} \d+$/m);
    assert.match(text, /^gw_rest_function_calls_total\{route="hello\.world",outcome="ok"\} \d+$/m);
    assert.match(text, /^gw_rest_function_calls_total\{route="hello\.error",outcome="error"\} \d+$/m);
    assert.match(text, /^gw_rest_request_duration_seconds_count \d+$/m);
    assert.match(text, /^gw_rest_endpoints 37$/m);
  });
});

describe('Expect: 100-continue', () => {
  it('refuses a declared oversized body without asking for it', async () => {
    const answer = await new Promise<{ status: number; continued: boolean }>((resolve, reject) => {
      let continued = false;
      const req = httpRequest(`${base}/api/echo/1`, {
        method: 'POST',
        headers: {
          'content-type': 'application/octet-stream',
          'content-length': '2000000',
          expect: '100-continue',
        },
      });
      req.on('continue', () => {
        continued = true;
        req.end(Buffer.alloc(2_000_000));
      });
      req.on('response', (res) => {
        res.resume();
        resolve({ status: res.statusCode!, continued });
        req.destroy();
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    assert.deepEqual(answer, { status: 413, continued: false });
  });

  it('asks for a body within the limit', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${base}/api/echo/1`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain', 'content-length': '5', expect: '100-continue' },
      });
      req.on('continue', () => req.end('hello'));
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    assert.equal(status, 200);
  });
});
