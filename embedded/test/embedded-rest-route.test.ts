/**
 * The embedded gateway's default route (no PROXY_CONFIG_FILE): the public edge's /api/… goes to
 * the REST engine of this process, on the port it really listens on, whatever REST_SERVER_PORT
 * says, never to another process that happens to listen on the usual 8085. And the engine runs
 * the application it was given: without REST_CONFIG_FOLDER, none (the example app only when named).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import {
  type EmbeddedGateway,
  ephemeralGatewaySettings,
  exampleAppSettings,
  startEmbeddedGateway,
} from '../src/index.ts';

/** A server on 127.0.0.1:8085 that answers what no REST engine would; undefined when the port is taken. */
async function decoyOnUsualPort(): Promise<Server | undefined> {
  const decoy = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"decoy":true}');
  });
  return new Promise((resolve) => {
    decoy.once('error', () => resolve(undefined));
    decoy.listen(8085, '127.0.0.1', () => resolve(decoy));
  });
}

describe('embedded default route to its own REST engine', () => {
  let decoy: Server | undefined;
  let gw: EmbeddedGateway;
  let bare: EmbeddedGateway;
  before(async () => {
    decoy = await decoyOnUsualPort();
    gw = await startEmbeddedGateway({ ...ephemeralGatewaySettings, ...exampleAppSettings });
    bare = await startEmbeddedGateway({ ...ephemeralGatewaySettings });
  });
  after(async () => {
    await gw?.stop();
    await bare?.stop();
    decoy?.close();
  });

  it('routes /api/… to the port its REST engine listens on, not to 8085', async () => {
    assert.notEqual(gw.restPort, 8085);
    const res = await fetch(`http://127.0.0.1:${gw.publicPort}/api/hello/world`);
    const body = await res.text();
    assert.equal(res.status, 200, body);
    assert.deepEqual(JSON.parse(body), { hello: 'world' }, 'the example app of this process answered');
  });

  it('runs no example app unless REST_CONFIG_FOLDER names it', async () => {
    const res = await fetch(`http://127.0.0.1:${bare.publicPort}/api/hello/world`);
    const body = await res.text();
    assert.equal(res.status, 404, body);
    assert.doesNotMatch(body, /hello|decoy/);
    assert.equal((await fetch(`http://127.0.0.1:${bare.restPort}/health`)).status, 200, 'its engine is up');
  });
});
