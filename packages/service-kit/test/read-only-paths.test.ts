/**
 * The host's own read-only paths (`/health`, `/ready`, `/metrics`, `/swagger.json` on the internal
 * API, `/_gw/health` on the edge) answer GET and HEAD, and 405 with `allow: GET, HEAD` to any other
 * method, as the OpenAPI document says (schemathesis found `TRACE /health` answered 200).
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { RunningHost } from '../src/index.ts';
import { startTestHost } from './test-host.ts';

describe('service host: read-only paths', () => {
  let host: RunningHost;
  before(async () => {
    host = await startTestHost({
      publicPort: 0,
    });
  });
  after(() => host?.stop());

  const urls = () => [
    ...['/health', '/ready', '/metrics', '/swagger.json'].map((p) => `http://127.0.0.1:${host.apiPort}${p}`),
    `http://127.0.0.1:${host.publicPort}/_gw/health`,
  ];

  it('answer GET and HEAD', async () => {
    for (const url of urls())
      for (const method of ['GET', 'HEAD']) assert.equal((await fetch(url, { method })).status, 200, url);
  });

  it('answer any other method 405 with allow: GET, HEAD', async () => {
    for (const url of urls())
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE']) {
        const { status, allow } = await send(method, url);
        assert.equal(status, 405, `${method} ${url}`);
        assert.equal(allow, 'GET, HEAD', `${method} ${url}`);
      }
  });
});

/** node:http, since fetch refuses TRACE. */
function send(
  method: string,
  url: string,
): Promise<{ status: number | undefined; allow: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, allow: res.headers.allow }));
    });
    req.on('error', reject);
    req.end();
  });
}
