/**
 * HTTP forwarding through two proxy replicas (processes) to real node:http backends: matching and
 * rewriting, the forwarding header rules, 404/502/504, CORS, JWT variants (HS256, RS256 from a
 * JWKS, header, custom header, query, blacklist), streaming a 50 MB upload and an SSE response, and
 * metrics labelled by path_regex.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { connect as connectHttp2 } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { blacklistKey, signJwt } from '@gatehouse/auth';
import { RedisStore } from '@gatehouse/store/redis';
import { dependencyAddress, selfSignedCertificate, sleep, uniqueName } from '@gatehouse/testkit';
import { type ProxyProcess, startProxy } from './proxy-process.ts';
import { startBackend, type TestBackend } from './test-backend.ts';

const prefix = `${uniqueName('gw-proxy-fwd')}:`;
const secret = 'a-proxy-test-secret-that-is-long-enough-for-hs256';
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
let backend: TestBackend;
let jwks: Server;
let store: RedisStore;
let a: ProxyProcess;
let b: ProxyProcess;
const { certFile, keyFile } = selfSignedCertificate();

const exp = () => Math.floor(Date.now() / 1000) + 600;
const hsToken = (claims: Record<string, unknown> = {}) =>
  signJwt({ sub: 'u', jti: 'session-ok', exp: exp(), ...claims }, { alg: 'HS256', key: secret });

function apis() {
  const proxy = { target_url: '127.0.0.1', port: backend.port };
  const secured = (id: string, path: string) => ({ id, method: 'GET', path_regex: path, secured: true });
  return [
    {
      id: 'open',
      name: 'open',
      version_data: {
        default: {
          transform_request_headers: { add_headers: { 'X-Added': 'yes', 'x-replaced': 'by-config' } },
          endpoints: [
            {
              id: 'rewrite',
              method: 'GET',
              path_regex: '/foo/([^/]+)/bar/([^/]+)',
              path_replacement: '/bar/\\1/foo/\\2',
            },
            { id: 'echo', method: 'GET', path_regex: '/echo(/.*)?' },
            { id: 'upload', method: 'POST', path_regex: '/upload' },
            { id: 'transform', method: 'POST', path_regex: '/transform', transform_request_headers: true },
            { id: 'slow', method: 'GET', path_regex: '/slow', response_timeout: 300 },
            { id: 'sse', method: 'GET', path_regex: '/events' },
          ],
        },
      },
      proxy,
    },
    {
      id: 'dead',
      name: 'dead',
      version_data: {
        default: {
          endpoints: [
            { id: 'gone', method: 'GET', path_regex: '/dead' },
            { id: 'gone-post', method: 'POST', path_regex: '/dead' },
          ],
        },
      },
      proxy: { target_url: '127.0.0.1', port: 1 },
    },
    {
      id: 'secure',
      name: 'secure',
      auth_type: 'jwt',
      version_data: { default: { endpoints: [secured('header', '/secure/header')] } },
      proxy,
    },
    {
      id: 'secure-other',
      name: 'secure-other',
      auth_type: 'jwt',
      auth: { use_header: true, header_name: 'x-token', use_query: true, query_name: 'jwt' },
      version_data: { default: { endpoints: [secured('custom', '/secure/custom')] } },
      proxy,
    },
  ];
}

/** A raw request, so tests see header case and send hop-by-hop headers fetch would refuse. */
function raw(
  url: string,
  options: { method?: string; headers?: Record<string, string | string[]>; body?: Buffer | Readable } = {},
): Promise<{
  status: number;
  rawHeaders: string[];
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          rawHeaders: res.rawHeaders,
          headers: res.headers,
          body: Buffer.concat(chunks),
        }),
      );
    });
    req.on('error', reject);
    if (options.body instanceof Readable) options.body.pipe(req);
    else req.end(options.body);
  });
}

describe('proxy forwarding (two replicas, real backends)', () => {
  before(async () => {
    backend = await startBackend();
    jwks = createServer((_req, res) => {
      const jwk = { ...rsa.publicKey.export({ format: 'jwk' }), kid: 'k1', use: 'sig', alg: 'RS256' };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
    store = await RedisStore.connect({ url: dependencyAddress.redisUrl, namespace: prefix });
    const env = {
      REDIS_URL: dependencyAddress.redisUrl,
      STORE_KEY_PREFIX: prefix,
      JWT_SECRET_KEY: secret,
      JWT_ALG: 'HS256,RS256',
      JWT_JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks`,
      CORS_ALLOWED_ORIGINS: 'https://app.example',
      // Far above an endpoint's 300 ms response_timeout: a 504 that waited for this one instead is
      // told apart on a loaded machine (no test waits for it).
      PROXY_RECV_TIMEOUT: '20s',
    };
    a = await startProxy({ ...env, PROXY_CONFIG_FILE: JSON.stringify(apis()) });
    // Replica B also serves HTTPS and HTTP/2.
    b = await startProxy({
      ...env,
      HTTPS_CERTFILE: certFile,
      HTTPS_KEYFILE: keyFile,
      INBOUND_HTTPS_PORT: '0',
    });
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await backend?.close();
    jwks?.close();
    await store?.close();
  });

  it('rewrites the path, keeps the query string, and sets Host, Forwarded, X-Forwarded-* and the trace', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await raw(`${b.publicUrl}/foo/a%20b/bar/2?page[offset]=0&page[limit]=10&x=%2F`, {
      headers: {
        Forwarded: 'for=192.0.2.60;proto=https',
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
        Connection: 'keep-alive, X-Hop',
        'X-Hop': 'private',
        'Keep-Alive': 'timeout=5',
        'X-Kept': 'yes',
      },
    });
    assert.equal(res.status, 200);
    const seen = backend.seen.at(-1)!;
    assert.equal(seen.url, '/bar/a%20b/foo/2?page[offset]=0&page[limit]=10&x=%2F');
    assert.equal(seen.headers.host, `127.0.0.1:${backend.port}`);
    // The client is no trusted proxy (TRUSTED_PROXIES is empty): its own Forwarded is dropped and
    // the upstream gets this hop's alone (embedded/test/forwarding-trust.test.ts: the trusted case).
    assert.match(
      seen.headers.forwarded!,
      /^for=127\.0\.0\.1;by=127\.0\.0\.1;host="127\.0\.0\.1:\d+";proto=http$/,
    );
    assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(seen.headers['x-forwarded-proto'], 'http');
    assert.match(
      String(seen.headers.traceparent),
      new RegExp(`^00-${traceId}-(?!00f067aa0ba902b7)[0-9a-f]{16}-01$`),
    );
    assert.equal(seen.headers['x-kept'], 'yes');
    assert.equal(seen.headers['x-hop'], undefined, 'headers named in Connection are hop-by-hop');
    assert.equal(seen.headers['keep-alive'], undefined);
  });

  it('passes response headers lower-cased, without hop-by-hop ones, and adds no CORS', async () => {
    backend.handler = (_req, res) => {
      res.setHeader('X-Upper-Case', 'v');
      res.setHeader('Connection', 'keep-alive, X-Internal');
      res.setHeader('X-Internal', 'secret');
      res.setHeader('Set-Cookie', ['a=1', 'b=2']);
      res.end('ok');
    };
    const res = await raw(`${a.publicUrl}/echo/headers`);
    const names = res.rawHeaders.filter((_, i) => i % 2 === 0);
    assert.ok(names.includes('x-upper-case'));
    assert.ok(!names.includes('X-Upper-Case'));
    assert.equal(res.headers['x-internal'], undefined);
    assert.deepEqual(res.headers['set-cookie'], ['a=1', 'b=2']);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.equal(res.body.toString(), 'ok');
  });

  it('merges the API headers when the endpoint transforms headers, and passes the body untouched', async () => {
    backend.handler = (_req, res) => res.end();
    const body = Buffer.from([0, 1, 2, 255, 254, 10, 13]);
    const res = await raw(`${a.publicUrl}/transform`, {
      method: 'POST',
      headers: { 'x-replaced': 'by-client', 'content-type': 'application/octet-stream' },
      body,
    });
    assert.equal(res.status, 200);
    const seen = backend.seen.at(-1)!;
    assert.equal(seen.headers['x-added'], 'yes');
    assert.equal(seen.headers['x-replaced'], 'by-config');
    assert.deepEqual(seen.body, body);
  });

  it('answers 404 JSON for no match and for another method', async () => {
    for (const [method, path] of [
      ['GET', '/nothing-here'],
      ['DELETE', '/echo'],
    ] as const) {
      const res = await fetch(`${a.publicUrl}${path}`, { method });
      assert.equal(res.status, 404);
      assert.deepEqual(await res.json(), { message: 'Not Found' });
    }
  });

  it('answers HEAD from a GET endpoint', async () => {
    backend.handler = (_req, res) => res.writeHead(200, { 'content-length': '5', 'x-head': 'yes' }).end();
    const res = await raw(`${a.publicUrl}/echo/head`, { method: 'HEAD' });
    assert.equal(res.status, 200);
    assert.equal(res.headers['x-head'], 'yes');
    assert.equal(backend.seen.at(-1)!.method, 'HEAD');
  });

  it('answers 502 for an unreachable target and 504 when it is too slow', async () => {
    const dead = await fetch(`${a.publicUrl}/dead`);
    assert.equal(dead.status, 502);
    assert.equal(await dead.text(), 'Bad gateway.');
    const deadPost = await raw(`${a.publicUrl}/dead`, { method: 'POST', body: Buffer.alloc(200_000, 1) });
    assert.equal(deadPost.status, 502, 'a request body does not keep the client from its answer');
    backend.handler = () => {};
    const started = Date.now();
    const slow = await fetch(`${b.publicUrl}/slow`);
    assert.equal(slow.status, 504);
    assert.ok(
      Date.now() - started < 5000,
      `the endpoint response_timeout applies (${Date.now() - started} ms)`,
    );
  });

  it('checks JWTs on secured endpoints: HS256, RS256 by JWKS, header, custom header, query, blacklist', async () => {
    backend.handler = (_req, res) => res.end('secret stuff');
    const rs = signJwt(
      { sub: 'r', jti: 'session-rs', exp: exp() },
      { alg: 'RS256', key: rsa.privateKey, kid: 'k1' },
    );
    const expired = signJwt(
      { jti: 's', exp: Math.floor(Date.now() / 1000) - 600 },
      { alg: 'HS256', key: secret },
    );
    const forged = signJwt(
      { jti: 's', exp: exp() },
      { alg: 'HS256', key: 'another-secret-that-is-long-enough-for-it' },
    );
    const status = async (path: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${a.publicUrl}${path}`, { headers });
      await res.arrayBuffer();
      return res;
    };
    assert.equal((await status('/secure/header', { authorization: `Bearer ${hsToken()}` })).status, 200);
    assert.equal((await status('/secure/header', { authorization: `Bearer ${rs}` })).status, 200);
    assert.equal(
      (await status('/secure/header', { authorization: `Basic x, Bearer ${hsToken()}` })).status,
      200,
    );
    const refused = await status('/secure/header', { origin: 'https://app.example' });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('access-control-allow-origin'), 'https://app.example');
    assert.equal(refused.headers.get('access-control-allow-credentials'), 'true');
    assert.equal(refused.headers.get('vary'), 'Origin');
    assert.equal(
      (await status('/secure/header', { authorization: hsToken() })).status,
      401,
      'no implicit Bearer',
    );
    assert.equal((await status('/secure/header', { authorization: `Bearer ${expired}` })).status, 401);
    assert.equal((await status('/secure/header', { authorization: `Bearer ${forged}` })).status, 401);
    assert.equal((await status('/secure/custom', { 'x-token': hsToken() })).status, 200);
    // One signature check per request, whatever it carries: only the first token counts.
    assert.equal((await status(`/secure/custom?jwt=${hsToken()},${expired}`)).status, 200);
    assert.equal((await status(`/secure/custom?jwt=${expired},${hsToken()}`)).status, 401);
    const many = Array.from({ length: 50 }, () => `Bearer ${forged}`).join(', ');
    assert.equal(
      (await status('/secure/header', { authorization: `${many}, Bearer ${hsToken()}` })).status,
      401,
    );
    assert.equal((await status('/secure/custom', { 'x-token': `${hsToken()}, ${forged}` })).status, 200);
    assert.equal((await status('/secure/custom', { authorization: `Bearer ${hsToken()}` })).status, 401);

    const token = hsToken({ jti: 'session-killed' });
    assert.equal((await status('/secure/header', { authorization: `Bearer ${token}` })).status, 200);
    await store.set(blacklistKey('session-killed'), '1', { ttlSeconds: 60 });
    await sleep(200);
    assert.equal((await status('/secure/header', { authorization: `Bearer ${token}` })).status, 401);
    const onB = await fetch(`${b.publicUrl}/secure/header`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(onB.status, 401);
  });

  it("answers browsers' preflights of secured endpoints, so a page can read the 401", async () => {
    // A page POSTing JSON, or sending its (expired) token, is preflighted; a 404 there hides the 401.
    const preflight = (path: string, origin: string, headers: string) =>
      fetch(`${a.publicUrl}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': headers,
        },
      });
    const allowed = await preflight('/secure/header', 'https://app.example', 'content-type, authorization');
    assert.equal(allowed.status, 204);
    assert.equal(allowed.headers.get('access-control-allow-origin'), 'https://app.example');
    assert.equal(allowed.headers.get('access-control-allow-credentials'), 'true');
    assert.match(allowed.headers.get('access-control-allow-methods') ?? '', /\bPOST\b/);
    assert.equal(allowed.headers.get('access-control-allow-headers'), 'content-type, authorization');
    const custom = await preflight('/secure/custom', 'https://app.example', 'x-token');
    assert.equal(custom.status, 204);
    assert.equal(custom.headers.get('access-control-allow-headers'), 'content-type, authorization, x-token');
    const stranger = await preflight('/secure/header', 'https://evil.example', 'authorization');
    assert.equal(stranger.status, 204);
    assert.equal(stranger.headers.get('access-control-allow-origin'), null);
    // An open endpoint's CORS stays its target's business (RIG): define an OPTIONS endpoint for it.
    assert.equal((await preflight('/echo', 'https://app.example', 'content-type')).status, 404);
    const refused = await fetch(`${a.publicUrl}/secure/header`, {
      method: 'GET',
      headers: { origin: 'https://app.example', 'content-type': 'application/json' },
    });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('access-control-allow-origin'), 'https://app.example');
    assert.equal(refused.headers.get('access-control-expose-headers'), 'www-authenticate');
    await refused.arrayBuffer();
  });

  it('streams a 50 MB upload with backpressure, never holding it in memory', async () => {
    // The backend does not read at first: a proxy that buffered would take the whole upload in.
    let resumeBackend!: () => void;
    const backendMayRead = new Promise<void>((r) => (resumeBackend = r));
    const total = 50 * 1024 * 1024;
    let received = 0;
    const server = createServer((req, res) => {
      req.pause();
      void backendMayRead.then(() => {
        req.on('data', (c: Buffer) => (received += c.length));
        req.on('end', () => res.end(String(received)));
        req.resume();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const upload = {
      id: 'upload-api',
      name: 'upload-api',
      version_data: { default: { endpoints: [{ id: 'big', method: 'POST', path_regex: '/big-upload' }] } },
      proxy: { target_url: '127.0.0.1', port },
    };
    const created = await fetch(`${a.apiUrl}/v3/apis`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(upload),
    });
    assert.equal(created.status, 201);
    const chunk = Buffer.alloc(64 * 1024, 7);
    let sent = 0;
    const body = new Readable({
      read() {
        if (sent >= total) {
          this.push(null);
          return;
        }
        sent += chunk.length;
        this.push(chunk);
      },
    });
    const baseline = a.rss();
    const answer = raw(`${a.publicUrl}/big-upload`, {
      method: 'POST',
      headers: { 'content-length': String(total), 'content-type': 'application/octet-stream' },
      body,
    });
    await sleep(1000);
    const sentWhileBlocked = sent;
    const grown = a.rss() - baseline;
    resumeBackend();
    const res = await answer;
    server.close();
    assert.equal(res.status, 200);
    assert.equal(res.body.toString(), String(total));
    assert.ok(
      sentWhileBlocked < 16 * 1024 * 1024,
      `the client could send ${sentWhileBlocked} bytes to a stalled backend`,
    );
    assert.ok(
      grown < 20 * 1024 * 1024,
      `RSS grew by ${(grown / 1048576).toFixed(1)} MiB while the backend stalled`,
    );
  });

  it('streams an SSE response event by event', async () => {
    let release!: () => void;
    const second = new Promise<void>((r) => (release = r));
    backend.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write('data: one\n\n');
      void second.then(() => res.end('data: two\n\n'));
    };
    const res = await fetch(`${b.publicUrl}/events`);
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const reader = res.body!.getReader();
    const first = await reader.read();
    assert.equal(
      Buffer.from(first.value!).toString(),
      'data: one\n\n',
      'the first event arrives before the second exists',
    );
    release();
    let rest = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += Buffer.from(value).toString();
    }
    assert.equal(rest, 'data: two\n\n');
  });

  it('forwards HTTP/2 requests, dropping the HTTP/1.1 connection headers of the response', async () => {
    backend.handler = (_req, res, seen) => {
      res.writeHead(200, {
        Connection: 'keep-alive, X-Internal',
        'X-Internal': 'x',
        'Keep-Alive': 'timeout=5',
        'X-Kept': 'k',
      });
      res.write(`got ${seen.bodyBytes} bytes`);
      res.end(' over h2');
    };
    const session = connectHttp2(b.publicTlsUrl!, { ca: readFileSync(certFile) });
    try {
      const stream = session.request({ ':method': 'POST', ':path': '/upload' });
      stream.end(Buffer.alloc(100_000, 1));
      let headers: Record<string, unknown> = {};
      stream.on('response', (h) => (headers = h));
      let body = '';
      stream.on('data', (c: Buffer) => (body += c.toString()));
      await new Promise((r) => stream.on('end', r));
      assert.equal(headers[':status'], 200);
      assert.equal(headers['x-kept'], 'k');
      assert.equal(headers['x-internal'], undefined);
      assert.equal(body, 'got 100000 bytes over h2');
      const seen = backend.seen.at(-1)!;
      assert.match(String(seen.headers.forwarded), /proto=https$/);
      assert.equal(seen.headers.host, `127.0.0.1:${backend.port}`);
    } finally {
      session.close();
    }
  });

  it('counts requests by endpoint path_regex, never by raw path', async () => {
    backend.handler = (_req, res) => res.end();
    for (const path of ['/echo/one', '/echo/two', '/echo/three'])
      await (await fetch(`${a.publicUrl}${path}`)).text();
    const metrics = await (await fetch(`${a.apiUrl}/metrics`)).text();
    assert.match(
      metrics,
      /gw_proxy_requests_total\{method="GET",path_regex="\/echo\(\/\.\*\)\?",target="http",response_from="http",status="ok"[^}]*\} \d+/,
    );
    assert.match(
      metrics,
      /gw_proxy_requests_total\{method="GET",path_regex="N\/A",target="N\/A",response_from="N\/A",status="not_found"/,
    );
    assert.doesNotMatch(metrics, /\/echo\/one/);
  });
});
