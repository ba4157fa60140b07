/**
 * The REST engine behind the public edge, as a client reaches it: the edge and the engine read one
 * canonical path, the static-content filter decides on the file served, and the engine's relay
 * forwards that path undecoded. The example app (examples/rest-app) is routed at runtime under
 * /app/ to this gateway's own REST engine port.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { freePort } from '@gatehouse/testkit';
import {
  type EmbeddedGateway,
  ephemeralGatewaySettings,
  exampleAppSettings,
  startEmbeddedGateway,
} from '../src/index.ts';

/** A GET with its target sent as written (fetch would resolve dot segments and re-encode). */
function rawGet(port: number, target: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: target }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('REST engine behind the public edge', () => {
  let gw: EmbeddedGateway;
  before(async () => {
    // A known port: the example's relay endpoint forwards to the engine's own rest.server.port.
    gw = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      ...exampleAppSettings,
      REST_SERVER_PORT: String(await freePort()),
    });
    const api = {
      id: 'rest-app-edge',
      name: 'rest-app-edge',
      version_data: {
        default: {
          endpoints: [{ id: 'app', method: 'GET', path_regex: '/app/(.*)', path_replacement: '/\\1' }],
        },
      },
      proxy: { use_env: false, target_url: 'http://127.0.0.1', port: gw.restPort },
    };
    const created = await fetch(`http://127.0.0.1:${gw.apiPort}/v3/apis`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(api),
    });
    assert.equal(created.status, 201, await created.text());
  });
  after(() => gw.stop());

  const get = (target: string) => rawGet(gw.publicPort!, target);

  it('filters the static file served, however the path names it', async () => {
    for (const target of [
      '/app/forbidden',
      '/app/forbidden.html',
      '/app//forbidden.html',
      '/app/x/../forbidden',
    ]) {
      const res = await get(target);
      assert.equal(res.status, 403, `${target}: ${res.status} ${res.body}`);
      assert.match(res.body, /This page is not for you/);
    }
    assert.equal((await get('/app/about')).status, 200);
  });

  it('relays the canonical path undecoded: %3F stays in its segment', async () => {
    const res = await get('/app/api/relay/echo/a%3Fb?x=1');
    assert.equal(res.status, 200, res.body);
    const body = JSON.parse(res.body) as Record<string, unknown>;
    assert.equal(body['url'], '/api/echo/a%3Fb');
    assert.deepEqual(body['path_parameters'], { id: 'a?b' });
    assert.equal(body['query_string'], 'x=1');
  });
});
