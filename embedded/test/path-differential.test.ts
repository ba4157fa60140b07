/**
 * The differential path test: generated spellings of protected paths sent through the public edge,
 * each compared with how the upstream itself reads that spelling. A spelling the upstream serves as
 * the protected resource must be refused by the edge without a token (401, or 400 when it cannot be
 * made canonical): the proxy's decision equals the decision for the path the upstream resolves it
 * to. And what an upstream receives is exactly the canonical path that was checked.
 *
 * Upstreams: the REST engine (it decodes, ignores case and empty segments), and a recording server
 * standing for any other upstream. Plus the upgrade tunnel: a client-chosen path never picks the
 * tunnel's host.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Server as NetServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { signJwt } from '@gatehouse/auth';
import { canonicalPath } from '@gatehouse/service-kit';
import { type RawAnswer, rawRequest as raw, spellings } from '@gatehouse/testkit';
import {
  type EmbeddedGateway,
  ephemeralGatewaySettings,
  exampleAppSettings,
  startEmbeddedGateway,
} from '../src/index.ts';

const jwtKey = 'path-differential-secret-of-sufficient-length';

/** The REST engine's echo endpoint answered: the protected resource was served. */
function echoServed(answer: RawAnswer): boolean {
  if (answer.status !== 200) return false;
  try {
    const json = JSON.parse(answer.body.includes('{') ? answer.body.slice(answer.body.indexOf('{')) : '');
    return typeof json.path_parameters?.id === 'string';
  } catch {
    return false;
  }
}

describe('differential path test through the public edge', () => {
  let gw: EmbeddedGateway;
  let recorder: Server;
  let decoy: NetServer;
  const received: string[] = [];
  let decoyConnections = 0;
  let token: string;

  before(async () => {
    recorder = createServer((req: IncomingMessage, res) => {
      received.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url }));
    });
    recorder.on('upgrade', (req: IncomingMessage, socket) => {
      received.push(req.url ?? '');
      socket.end('HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: websocket\r\n\r\n');
    });
    await new Promise<void>((r) => recorder.listen(0, '127.0.0.1', r));
    decoy = createNetServer((s) => {
      decoyConnections++;
      s.destroy();
    });
    await new Promise<void>((r) => decoy.listen(0, '127.0.0.1', r));
    gw = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      ...exampleAppSettings,
      JWT_SECRET_KEY: jwtKey,
      PROXY_TARGET_ALLOW: '127.0.0.1',
    });
    const api = `http://127.0.0.1:${gw.apiPort}/v3/apis`;
    const recorderPort = (recorder.address() as AddressInfo).port;
    const define = async (id: string, port: number, endpoints: unknown[]) => {
      const res = await fetch(api, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          id,
          name: id,
          auth_type: 'jwt',
          version_data: { default: { endpoints } },
          proxy: { target_url: '127.0.0.1', port },
        }),
      });
      assert.ok(res.ok, `${res.status} ${await res.text()}`);
    };
    await define('d-rest', gw.restPort!, [
      { id: 'echo', method: 'GET', path_regex: '/api/echo/(.*)', secured: true },
      { id: 'cookies', method: 'GET', path_regex: '/api/cookies', secured: true },
      { id: 'rest', method: 'GET', path_regex: '/api/(.*)' },
    ]);
    await define('e-rec', recorderPort, [
      { id: 'secret', method: 'GET', path_regex: '/rec/secret/(.*)', secured: true },
      { id: 'rec', method: 'GET', path_regex: '/rec/(.*)' },
    ]);
    await define('f-tunnel', recorderPort, [
      { id: 'tunnel', method: 'GET', path_regex: '/t(/.*)', path_replacement: '/\\1' },
    ]);
    token = signJwt({ sub: 'u', exp: Math.floor(Date.now() / 1000) + 600 }, { alg: 'HS256', key: jwtKey });
  });
  after(async () => {
    await gw?.stop();
    recorder?.close();
    decoy?.close();
  });

  /** Secured endpoints of the REST engine, each with how to tell that it was the one that answered. */
  const securedRest: Array<{ base: string; served: (a: RawAnswer) => boolean }> = [
    { base: '/api/echo/1', served: echoServed },
    { base: '/api/cookies', served: (a) => a.status === 201 && a.body.includes('hello stranger') },
  ];
  for (const { base, served } of securedRest)
    it(`refuses every spelling the REST engine serves as ${base}, and serves it with a token`, async () => {
      const edge = gw.publicPort!;
      const auth = { authorization: `Bearer ${token}` };
      assert.ok(served(await raw(edge, base, auth)), 'the control: a token reaches it');
      assert.equal((await raw(edge, base)).status, 401, 'the control: no token, 401');
      const tried = spellings(base);
      const bypasses: string[] = [];
      const mismatches: string[] = [];
      let upstreamServes = 0;
      for (const spelling of tried) {
        const direct = await raw(gw.restPort!, spelling);
        const viaEdge = await raw(edge, spelling);
        if (served(viaEdge)) bypasses.push(`${spelling} → ${viaEdge.status}`);
        if (!served(direct)) continue;
        upstreamServes++;
        // 401: no token; 400: no canonical path; 404: no endpoint. None of them reaches the upstream.
        if (![400, 401, 404].includes(viaEdge.status)) mismatches.push(`${spelling} → ${viaEdge.status}`);
      }
      console.log(
        `# REST engine, ${base}: ${tried.length} spellings, ${upstreamServes} served by the engine itself`,
      );
      assert.deepEqual(bypasses, [], 'spellings that reached the secured endpoint without a token');
      assert.deepEqual(
        mismatches,
        [],
        'spellings the upstream serves as secured but the edge did not refuse',
      );
      assert.ok(upstreamServes > 10, `the REST engine read many spellings as ${base} (${upstreamServes})`);
    });

  it('forwards exactly the canonical path that was checked to any other upstream', async () => {
    const edge = gw.publicPort!;
    const tried = spellings('/rec/secret/1');
    const leaks: string[] = [];
    const wrong: string[] = [];
    for (const spelling of tried) {
      received.length = 0;
      const answer = await raw(edge, spelling);
      const canonical = canonicalPath(spelling.split('?')[0]!);
      const rewritten = canonical.ok && canonical.path.startsWith('/t/');
      for (const path of received) {
        if (!rewritten && (!canonical.ok || path !== canonical.path)) wrong.push(`${spelling} → ${path}`);
        if (/^\/rec\/secret(\/|$)/i.test(path)) leaks.push(`${spelling} → ${path} (${answer.status})`);
      }
      if (!canonical.ok) assert.equal(answer.status, 400, spelling);
    }
    console.log(`# recording upstream: ${tried.length} spellings`);
    assert.deepEqual(wrong, [], 'the upstream received another path than the canonical one checked');
    assert.deepEqual(leaks, [], 'the secured path reached the upstream without a token');
  });

  it('never lets an upgrade path choose the tunnel host', async () => {
    const edge = gw.publicPort!;
    const decoyPort = (decoy.address() as AddressInfo).port;
    const upgrade = {
      upgrade: 'websocket',
      connection: 'upgrade',
      'sec-websocket-version': '13',
      'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
    };
    const answers: Record<string, number> = {};
    for (const target of [
      `/t//127.0.0.1:${decoyPort}/x`,
      `/t///127.0.0.1:${decoyPort}/x`,
      `/t/\\127.0.0.1:${decoyPort}/x`,
      `/t/%2f127.0.0.1:${decoyPort}/x`,
      `/t/..//127.0.0.1:${decoyPort}/x`,
    ]) {
      received.length = 0;
      const answer = await raw(edge, target, upgrade);
      answers[target] = answer.status;
      for (const path of received)
        assert.ok(!path.startsWith('//'), `${target} reached the target as ${path}`);
    }
    assert.equal(decoyConnections, 0, `the decoy was reached: ${JSON.stringify(answers)}`);
    assert.equal(answers[`/t//127.0.0.1:${decoyPort}/x`], 101, 'the configured target got the upgrade');
  });

  it('answers 400 to a target that cannot be made canonical, on the edge and the REST engine', async () => {
    for (const port of [gw.publicPort!, gw.restPort!])
      for (const target of ['/api/echo%2f1', '/api/%00', '/api\\echo/1', '/api/%c0%af', '/api/%zz', '*'])
        assert.equal((await raw(port, target)).status, 400, `${port} ${target}`);
  });
});
