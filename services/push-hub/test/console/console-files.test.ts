/**
 * The console's files (console-files.ts): page, script, style and icon, each with its content type,
 * Cache-Control and the strict Content-Security-Policy; the chart library from node_modules,
 * vega-interpreter with its vega-util import bound to the Vega bundle (a browser cannot resolve a
 * bare import); `/dashboard/` sent to the page; nothing else claimed.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { CONSOLE_CSP, createConsoleFiles } from '../../src/console/console-files.ts';

describe('console files', () => {
  let server: Server;
  let base: string;
  before(async () => {
    const files = createConsoleFiles();
    server = createServer((req, res) => {
      if (!files(req, res)) res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  it('serves the page, its script and style, and the chart library with types, caching and the CSP', async () => {
    const expected: Array<[string, RegExp, string]> = [
      ['/dashboard', /^text\/html/, 'no-cache'],
      ['/dashboard/console.js', /^text\/javascript/, 'no-cache'],
      ['/dashboard/console.css', /^text\/css/, 'no-cache'],
      ['/dashboard/favicon.svg', /^image\/svg\+xml$/, 'no-cache'],
      ['/dashboard/assets/vega.min.js', /^text\/javascript/, 'public, max-age=86400'],
      ['/dashboard/assets/vega-lite.min.js', /^text\/javascript/, 'public, max-age=86400'],
      ['/dashboard/assets/vega-interpreter.js', /^text\/javascript/, 'public, max-age=86400'],
    ];
    for (const [path, type, cache] of expected) {
      const res = await fetch(base + path);
      assert.equal(res.status, 200, path);
      assert.match(res.headers.get('content-type') ?? '', type, path);
      assert.equal(res.headers.get('cache-control'), cache, path);
      assert.equal(res.headers.get('content-security-policy'), CONSOLE_CSP, path);
      assert.ok((await res.arrayBuffer()).byteLength > 100, path);
    }
    assert.match(CONSOLE_CSP, /script-src 'self'(;|$)/);
  });

  it('has no inline script in the page, and links its icon (else a browser asks /favicon.ico)', async () => {
    const html = await (await fetch(`${base}/dashboard`)).text();
    assert.match(html, /<link rel="icon" href="dashboard\/favicon\.svg"/);
    for (const tag of html.match(/<script\b[^>]*>/g) ?? []) assert.match(tag, /\bsrc="/, tag);
    assert.doesNotMatch(html, /<script\b[^>]*>[^<\s]/);
  });

  it('binds vega-interpreter to the Vega bundle on the page, with no bare import left', async () => {
    const js = await (await fetch(`${base}/dashboard/assets/vega-interpreter.js`)).text();
    assert.doesNotMatch(js, /^import /m);
    assert.match(js, /= globalThis\.vega;/);
    assert.match(js, /export \{ expression as expressionInterpreter \}/);
  });

  it('sends /dashboard/ to the page, answers only GET and HEAD, and leaves other paths alone', async () => {
    const slash = await fetch(`${base}/dashboard/`, { redirect: 'manual' });
    assert.equal(slash.status, 301);
    assert.equal(slash.headers.get('location'), '../dashboard');
    assert.equal((await fetch(`${base}/dashboard`, { method: 'POST' })).status, 405);
    assert.equal((await fetch(`${base}/dashboard/assets/other.js`)).status, 404);
    assert.equal((await fetch(`${base}/dashboard/stream`)).status, 404);
  });
});
