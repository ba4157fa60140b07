/**
 * The differential path test with nginx as the edge (deploy/nginx's template, as compose runs it):
 * nginx picks the service by its own reading of the path (decoded, dots resolved, slashes merged)
 * and passes the target on as sent; the service then reads it the gateway's way (canonical-path.ts).
 * For every spelling of the gateway's own paths, the service nginx picked must be the one that owns
 * the canonical path the service will see, or that service must refuse the target (400): otherwise
 * the two read one URL two ways, and a path check at one of them is not the check at the other.
 *
 * Every upstream of the template is a recording server here, named by what it stands for.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { canonicalPath } from '@gatehouse/service-kit';
import { rawRequest, spellings } from '@gatehouse/testkit';
import { type EdgeUpstreams, type NginxEdge, startNginxEdge } from '../src/nginx-edge.ts';

type Service = keyof EdgeUpstreams;

/** Which service serves a canonical public path (the services' own handlers). */
function publicOwner(path: string): Service {
  if (path.startsWith('/_gw/v1/connection/') || path.startsWith('/_gw/v1/socket.io/')) return 'pushHub';
  if (
    path === '/_gw/health' ||
    path === '/_gw/v1/openapi.json' ||
    path === '/_gw/v1/presence' ||
    path === '/_gw/v1/history' ||
    path === '/_gw/v1/ack'
  )
    return 'pushHub';
  if (path === '/_gw/v1/events') return 'publisher';
  return 'proxy';
}

/** Which service serves a canonical internal path, or undefined when none does. */
function internalOwner(path: string): Service | undefined {
  if (/^\/(v[23]\/)?messages$/.test(path) || path === '/swagger.json') return 'publisherApi';
  if (/^\/v[23]\/apis(\/|$)/.test(path) || /^\/v[1-3]\/responses$/.test(path)) return 'proxyApi';
  if (/^\/v[1-3]\/session-blacklist(\/|$)/.test(path)) return 'blacklistApi';
  if (
    /^\/v3\/(connections(\/|$)|replicas$|presence$|history$|console\/test-event$)/.test(path) ||
    path.startsWith('/dashboard')
  )
    return 'pushHubApi';
  return undefined;
}

describe('nginx edge: the service nginx picks owns the path the service reads', () => {
  const servers: Server[] = [];
  const received: Array<{ service: Service; path: string }> = [];
  let edge: NginxEdge;

  before(async () => {
    const upstreams = {} as EdgeUpstreams;
    for (const service of [
      'pushHub',
      'pushHubApi',
      'publisher',
      'publisherApi',
      'proxy',
      'proxyApi',
      'blacklistApi',
    ] as const) {
      const server = createServer((req, res) => {
        received.push({ service, path: req.url ?? '' });
        res.end('ok');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      servers.push(server);
      upstreams[service] = [`127.0.0.1:${(server.address() as AddressInfo).port}`];
    }
    edge = await startNginxEdge(upstreams);
  });
  after(async () => {
    await edge?.stop();
    for (const s of servers) s.close();
  });

  async function differences(
    port: number,
    bases: string[],
    owner: (path: string) => Service | undefined,
    headers: Record<string, string> = {},
  ): Promise<{ tried: number; reached: number; differing: string[] }> {
    const differing: string[] = [];
    let tried = 0;
    let reached = 0;
    for (const base of bases)
      for (const spelling of spellings(base, 60)) {
        tried++;
        received.length = 0;
        await rawRequest(port, spelling, headers);
        for (const { service, path } of received) {
          reached++;
          const canonical = canonicalPath(path.split('?')[0]!);
          if (!canonical.ok) continue; // the service answers 400: nothing is served
          const expected = owner(canonical.path);
          if (expected !== service)
            differing.push(`${spelling} → ${service} as ${path} (owner: ${expected})`);
        }
      }
    return { tried, reached, differing };
  }

  it('on the public edge', async () => {
    const result = await differences(
      edge.listen.publicPort,
      [
        '/_gw/v1/events',
        '/_gw/v1/connection/sse',
        '/_gw/health',
        '/_gw/v1/presence',
        '/_gw/v1/history',
        '/_gw/v1/ack',
        '/api/echo/1',
        '/_gw/v1/socket.io/x',
      ],
      publicOwner,
    );
    console.log(`# public: ${result.tried} spellings, ${result.reached} reached a service`);
    assert.deepEqual(result.differing, []);
    assert.ok(result.reached > result.tried / 2, 'most spellings reached a service');
  });

  it('on the internal API', async () => {
    const result = await differences(
      edge.listen.internalPort,
      [
        '/v3/apis/a',
        '/v3/messages',
        '/v1/session-blacklist/s',
        '/v3/connections',
        '/v3/presence',
        '/v3/history',
        '/dashboard/x',
      ],
      internalOwner,
      { host: 'localhost' },
    );
    console.log(`# internal: ${result.tried} spellings, ${result.reached} reached a service`);
    assert.deepEqual(result.differing, []);
    assert.ok(result.reached > result.tried / 4, 'many spellings reached a service');
  });
});
