/**
 * What the HTTP relay sends upstream is the configured origin plus the canonical request path with
 * `url_rewrite` applied, and the query as sent: never decoded (`%3F` does not start a query, `%2F`
 * never becomes a separator), never resolved against the origin, so `..` cannot climb out of the
 * rewritten prefix. An upstream that cannot be reached is a 502 (504 when it times out) with a fixed
 * message: its address and the error stay in the log.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { upstreamPath } from '../../src/relay/http-relay.ts';
import { relayFailure } from '../../src/relay/relay-failure.ts';
import { configFolder, freePort, type RunningEngine, rawRequest, startEngine } from '../engine-fixture.ts';

let run: RunningEngine;
let upstream: Server;
let closedPort: number;
const received: string[] = [];

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

before(async () => {
  upstream = createServer((req, res) => {
    if (req.url?.startsWith('/reset')) {
      req.socket.destroy();
      return;
    }
    received.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ upstream: req.url }));
  });
  const port = await listen(upstream);
  closedPort = await freePort();
  const relayTo = (url: string, target: number, rewrite: string) =>
    `  - { service: "http://127.0.0.1:${target}", methods: [GET], url: "${url}", url_rewrite: ${rewrite}, timeout: 10s }`;
  const dir = configFolder({
    'application.yml': 'rest.automation: true\n',
    'rest.yaml': [
      'rest:',
      relayTo('/public/*', port, '["/public", "/internal/public"]'),
      relayTo('/reset/*', port, '["/reset", "/reset"]'),
      relayTo('/down/*', closedPort, '["/down", "/"]'),
      '',
    ].join('\n'),
  });
  run = await startEngine({ REST_CONFIG_FOLDER: dir });
});

after(async () => {
  await run.stop();
  upstream.closeAllConnections();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

const get = (target: string) => rawRequest(run.base, 'GET', target);

describe('HTTP relay: the upstream URL', () => {
  it('is the canonical path with the rewrite and the query as sent, never decoded', async () => {
    const cases: Array<[string, string]> = [
      ['/public/a%3Fb?x=%3F&y=1', '/internal/public/a%3Fb?x=%3F&y=1'],
      ['/public/a%23b', '/internal/public/a%23b'],
      ['/public//a/./b/../c', '/internal/public/a/c'],
      ['/public/caf%C3%A9', '/internal/public/caf%C3%A9'],
      ['/public/a%20b', '/internal/public/a%20b'],
      ['/public/%61%7e', '/internal/public/a~'],
      // Routing ignores case: so does the rewrite, or /PUBLIC/… reached the upstream's root.
      ['/PUBLIC/x', '/internal/public/x'],
      ['/Public/x', '/internal/public/x'],
    ];
    for (const [sent, expected] of cases) {
      const res = await get(sent);
      assert.equal(res.status, 200, `${sent}: ${res.body}`);
      assert.equal(JSON.parse(res.body).upstream, expected, sent);
    }
  });

  it('cannot be moved out of the rewritten prefix', async () => {
    received.length = 0;
    for (const sent of ['/public/..%2fadmin%2fsecret', '/public/..%5cadmin', '/public/%2e%2e%2fadmin']) {
      assert.equal((await get(sent)).status, 400, sent);
    }
    for (const sent of ['/public/../admin/secret', '/public/%2e%2e/admin', '/public/x/../../admin']) {
      assert.equal((await get(sent)).status, 404, sent);
    }
    assert.deepEqual(received, []);
  });

  it('is built from canonical paths only', () => {
    const rewrite = ['/public', '/internal/public'] as const;
    assert.equal(upstreamPath('/public/a%3Fb', rewrite), '/internal/public/a%3Fb');
    assert.equal(upstreamPath('/other/x', rewrite), '/other/x');
    assert.equal(upstreamPath('/public', ['/public', '']), '/');
    assert.equal(upstreamPath('/publicx', ['/public', '']), '/x');
    for (const raw of [
      '/public/../admin',
      '/public//x',
      '/public/%2e%2e/x',
      '/public/a%2fb',
      'http://evil/x',
    ]) {
      assert.throws(() => upstreamPath(raw, rewrite), { status: 400 }, raw);
    }
  });
});

describe('HTTP relay: an upstream that fails', () => {
  it('answers 502 with a fixed message when the upstream refuses the connection; the details are logged', async () => {
    const res = await get('/down/x');
    assert.equal(res.status, 502);
    assert.deepEqual(JSON.parse(res.body), { message: 'Bad gateway', type: 'error', status: 502 });
    assert.doesNotMatch(res.body, /127\.0\.0\.1|ECONNREFUSED|\d{4,5}/);
    const logged = run.logs.find(
      (l) => l['msg'] === 'relay failed' && JSON.stringify(l).includes('ECONNREFUSED'),
    );
    assert.ok(logged, 'the cause is in the log');
    assert.match(JSON.stringify(logged), new RegExp(`127\\.0\\.0\\.1:${closedPort}`));
  });

  it('answers 502 when the upstream drops the connection', async () => {
    const res = await get('/reset/x');
    assert.equal(res.status, 502);
    assert.equal(JSON.parse(res.body).message, 'Bad gateway');
  });

  it('tells timeouts (504) from other failures (502)', () => {
    const coded = (code: string) => Object.assign(new Error(`failed: ${code}`), { code });
    for (const code of [
      'UND_ERR_CONNECT_TIMEOUT',
      'UND_ERR_HEADERS_TIMEOUT',
      'UND_ERR_BODY_TIMEOUT',
      'ETIMEDOUT',
    ]) {
      assert.deepEqual(relayFailure(coded(code)), { status: 504, message: 'Gateway timeout' }, code);
    }
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'ENOTFOUND']) {
      assert.deepEqual(relayFailure(coded(code)), { status: 502, message: 'Bad gateway' }, code);
    }
    assert.deepEqual(relayFailure(new Error('x')), { status: 502, message: 'Bad gateway' });
  });
});
