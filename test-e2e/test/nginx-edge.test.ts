/**
 * The nginx edge (deploy/nginx/gatehouse.conf.template) in front of real service processes: two
 * push-hub replicas, two publishers and two proxies on Kafka and Redis, the blacklist service (and
 * the REST engine, which is not behind the edge).
 * SSE, WebSocket, long-polling and socket.io (polling, pinned to one replica; and WebSocket) reach
 * the hubs through nginx, spread over both replicas and unbuffered; an event posted to the edge
 * reaches all of them; every internal route lands on the service that owns it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { LongPollClient, openSse, openWs, waitFor } from '@gatehouse/testkit';
import { io } from 'socket.io-client';
import { type FullTopology, startFullTopology } from '../src/full-topology.ts';
import { type NginxEdge, startNginxEdge } from '../src/nginx-edge.ts';

const subs = (list: unknown) => encodeURIComponent(JSON.stringify(list));
const deliveryTimeout = { timeoutMs: 15_000 };
const hostPort = (url: string | undefined) => new URL(url!).host;

/** A request with the Host header a browser sends for the page's own name (fetch sets its own). */
function withHost(url: string, host: string, method = 'GET', body?: string) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(url, {
      method,
      headers: { host, ...(body !== undefined && { 'content-type': 'text/plain' }) },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
const internalApiDocument = new URL(
  '../../packages/service-kit/src/internal-api.openapi.json',
  import.meta.url,
);
const publicEdgeDocument = new URL(
  '../../packages/service-kit/src/public-edge.openapi.json',
  import.meta.url,
);

describe('nginx edge in front of the services', () => {
  let t: FullTopology;
  let backend: Server;
  let edge: NginxEdge;

  before(async () => {
    backend = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ path: req.url, forwardedFor: req.headers['x-forwarded-for'] ?? null }));
    });
    await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
    const backendPort = (backend.address() as AddressInfo).port;
    t = await startFullTopology({
      proxyApis: [
        {
          id: 'edge-echo',
          name: 'edge-echo',
          version_data: { default: { endpoints: [{ id: 'echo', method: 'GET', path_regex: '/shop/.*' }] } },
          proxy: { target_url: '127.0.0.1', port: backendPort },
        },
      ],
    });
    const { proxies, blacklist } = t;
    edge = await startNginxEdge({
      pushHub: t.hubs.map((h) => hostPort(h.publicUrl)),
      pushHubApi: t.hubs.map((h) => hostPort(h.apiUrl)),
      publisher: t.publishers.map((p) => hostPort(p.publicUrl)),
      publisherApi: t.publishers.map((p) => hostPort(p.apiUrl)),
      proxy: proxies.map((p) => hostPort(p.publicUrl)),
      proxyApi: proxies.map((p) => hostPort(p.apiUrl)),
      blacklistApi: [hostPort(blacklist.apiUrl)],
    });
  });

  after(async () => {
    const code = await edge?.stop();
    await t?.stop();
    backend?.close();
    assert.equal(code, 0, `nginx exits cleanly when the test stops it:\n${edge?.output()}`);
  });

  it('spreads SSE, WebSocket, long-polling and socket.io over both hubs and delivers an event posted to the edge', async (test) => {
    const wanted = [{ eventType: 'edge.greeting' }];
    const wsUrl = `${edge.publicUrl.replace('http', 'ws')}/_gw/v1/connection/ws?subscriptions=${subs(wanted)}`;
    const sse = await Promise.all(
      [1, 2, 3, 4].map(() =>
        openSse(`${edge.publicUrl}/_gw/v1/connection/sse?subscriptions=${subs(wanted)}`),
      ),
    );
    const ws = [openWs(wsUrl), openWs(wsUrl)];
    test.after(() => {
      for (const c of sse) c.close();
      for (const c of ws) c.ws.close();
    });
    const lp = new LongPollClient(edge.publicUrl);
    assert.equal((await lp.get(`?subscriptions=${subs(wanted)}`)).status, 200);
    const welcome = await lp.poll();
    assert.deepEqual(
      welcome.map((e) => e['type']),
      ['gw.connection.create', 'gw.subscriptions_set'],
    );
    // socket.io's polling transport only connects when every poll reaches the replica that opened it.
    const sockets = (['polling', 'websocket'] as const).map((transport) => {
      const socket = io(edge.publicUrl, {
        path: '/_gw/v1/socket.io/',
        auth: { subscriptions: wanted },
        transports: [transport],
      });
      const events: Array<Record<string, unknown>> = [];
      socket.on('edge.greeting', (e: Record<string, unknown>) => events.push(e));
      return { socket, events };
    });
    test.after(() => {
      for (const s of sockets) s.socket.close();
    });
    await waitFor(
      () => sse.every((c) => c.frames.length >= 2) && ws.every((c) => c.events.length >= 2),
      deliveryTimeout,
    );
    await waitFor(() => sockets.every((s) => s.socket.connected), {
      ...deliveryTimeout,
      what: 'socket.io to connect',
    });

    for (const hub of t.hubs) {
      const metrics = await (await fetch(`${hub.apiUrl}/metrics`)).text();
      for (const transport of ['sse', 'ws'])
        assert.match(
          metrics,
          new RegExp(`gw_connections\\{[^}]*transport="${transport}"[^}]*\\} [1-9]`),
          `${hub.name} holds ${transport} connections made through nginx`,
        );
    }

    const lpWaiting = lp.poll();
    const posted = await fetch(`${edge.publicUrl}/_gw/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/cloudevents+json' },
      body: JSON.stringify({
        specversion: '1.0',
        id: 'edge-1',
        source: 'e2e',
        type: 'edge.greeting',
        data: { n: 1 },
      }),
    });
    assert.equal(posted.status, 202, await posted.text());

    await waitFor(() => sse.every((c) => c.events('edge.greeting').length === 1), deliveryTimeout);
    await waitFor(
      () => ws.every((c) => c.events.some((e) => e['type'] === 'edge.greeting')),
      deliveryTimeout,
    );
    await waitFor(() => sockets.every((s) => s.events.length === 1), deliveryTimeout);
    const polled = [...(await lpWaiting)];
    while (polled.length === 0) polled.push(...(await lp.poll()));
    assert.deepEqual(
      polled.map((e) => e['id']),
      ['edge-1'],
    );
  });

  it('changes subscriptions through the edge with the token of a connection on either replica', async (test) => {
    const sse = await openSse(`${edge.publicUrl}/_gw/v1/connection/sse`);
    test.after(() => sse.close());
    await waitFor(() => sse.frames.length >= 2);
    const token = (sse.events('gw.connection.create')[0]!['data'] as { connection_token: string })
      .connection_token;
    for (const eventType of ['edge.first', 'edge.second']) {
      const res = await fetch(`${edge.publicUrl}/_gw/v1/connection/sse/${token}/subscriptions`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ subscriptions: [{ eventType }] }),
      });
      assert.equal(res.status, 204, await res.text());
    }
    await waitFor(() => sse.events('gw.subscriptions_set').length === 3, deliveryTimeout);
  });

  it('answers /_gw/health and /_gw/v1/openapi.json and sends every other public path to a proxy replica', async () => {
    const health = await fetch(`${edge.publicUrl}/_gw/health`);
    assert.equal(health.status, 200);
    assert.equal(await health.text(), 'OK');
    const document = await fetch(`${edge.publicUrl}/_gw/v1/openapi.json`);
    assert.equal(document.status, 200);
    assert.match(document.headers.get('content-type') ?? '', /^application\/json\b/);
    assert.deepEqual(await document.json(), JSON.parse(readFileSync(publicEdgeDocument, 'utf8')));
    const proxied = await fetch(`${edge.publicUrl}/shop/basket?id=7`);
    assert.equal(proxied.status, 200);
    const body = (await proxied.json()) as { path: string; forwardedFor: string | null };
    assert.equal(body.path, '/shop/basket?id=7');
    assert.match(String(body.forwardedFor), /127\.0\.0\.1/, 'nginx adds X-Forwarded-For');
    assert.equal((await fetch(`${edge.publicUrl}/nowhere`)).status, 404);
  });

  it('routes the internal API to the service that owns each path', async (test) => {
    const internal = edge.internalUrl;
    const health = await fetch(`${internal}/health`);
    assert.deepEqual([health.status, await health.text()], [200, 'OK']);

    // The internal API's OpenAPI document, which every service's host serves.
    const swagger = await fetch(`${internal}/swagger.json`);
    assert.equal(swagger.status, 200);
    assert.match(swagger.headers.get('content-type') ?? '', /^application\/json\b/);
    assert.deepEqual(await swagger.json(), JSON.parse(readFileSync(internalApiDocument, 'utf8')));

    // messages → publisher: the event reaches a hub connection.
    const sse = await openSse(
      `${edge.publicUrl}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'edge.msg' }])}`,
    );
    test.after(() => sse.close());
    await waitFor(() => sse.frames.length >= 2);
    for (const path of ['/v3/messages', '/v2/messages', '/messages']) {
      const res = await fetch(`${internal}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ specversion: '1.0', id: `msg${path}`, source: 'e2e', type: 'edge.msg' }),
      });
      assert.equal(res.status, 202, `${path}: ${await res.text()}`);
    }
    await waitFor(() => sse.events('edge.msg').length === 3, deliveryTimeout);

    // connections → any hub: it lists the connections of both.
    const listed = (await (await fetch(`${internal}/v3/connections?eventType=edge.msg`)).json()) as {
      connections: unknown[];
      partial: boolean;
    };
    assert.deepEqual([listed.connections.length, listed.partial], [1, false]);
    assert.equal((await fetch(`${internal}/v3/replicas`)).status, 200);
    // presence → any hub, on the internal API and (refused by the hub itself, the type having no
    // presence for clients) on the public edge.
    const present = (await (await fetch(`${internal}/v3/presence?eventType=edge.msg`)).json()) as {
      count: number;
    };
    assert.equal(present.count, 1);
    const publicPresence = await fetch(`${edge.publicUrl}/_gw/v1/presence?eventType=edge.msg`);
    assert.deepEqual(
      [publicPresence.status, await publicPresence.text()],
      [403, 'Presence is not enabled for this event type.'],
    );
    // The console's test event → any hub: published on the fan-out stream, the subscriber listed.
    const probe = await fetch(`${internal}/v3/console/test-event`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'edge.msg' }),
    });
    assert.equal(probe.status, 200);
    assert.equal(((await probe.json()) as { connections: unknown[] }).connections.length, 1);
    await waitFor(() => sse.events('edge.msg').length === 4, deliveryTimeout);
    // The console's history → any hub: the type's events, the test event the newest.
    await waitFor(async () => {
      const res = await fetch(`${internal}/v3/history?eventType=edge.msg`);
      const page = (await res.json()) as { events: Array<{ event: { source: string } }> };
      return page.events.length === 4 && page.events[0]!.event.source.startsWith('gatehouse/console/');
    }, deliveryTimeout);
    assert.match(
      (await fetch(`${internal}/dashboard`)).headers.get('content-security-policy') ?? '',
      /script-src 'self'/,
    );

    // apis → proxy.
    const apis = (await (await fetch(`${internal}/v3/apis`)).json()) as Array<{ id: string }>;
    assert.ok(
      apis.some((a) => a.id === 'edge-echo'),
      JSON.stringify(apis),
    );
    assert.equal((await fetch(`${internal}/v2/apis/edge-echo`)).status, 200);

    // responses → proxy: a response without a correlation id is refused by the proxy, not nginx.
    const response = await fetch(`${internal}/v3/responses`, { method: 'POST', body: 'orphan' });
    assert.equal(response.status, 400);
    assert.match(await response.text(), /^Failed to parse request body/);

    // session-blacklist → blacklist: the entry is kept, and a session connected through the edge dies.
    const session = `${t.keyPrefix}session`;
    const killed = await openSse(`${edge.publicUrl}/_gw/v1/connection/sse`, {
      authorization: `Bearer ${t.jwt({ jti: session, username: 'eve' })}`,
    });
    test.after(() => killed.close());
    await waitFor(() => killed.frames.length >= 2);
    const blacklisted = await fetch(`${internal}/v3/session-blacklist`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sessionId: session, validityInSeconds: 60 }),
    });
    assert.equal(blacklisted.status, 201, await blacklisted.text());
    assert.equal(
      (await fetch(`${internal}/v3/session-blacklist/${encodeURIComponent(session)}`)).status,
      200,
    );
    await waitFor(() => killed.events('gw.session_killed').length === 1, deliveryTimeout);
    await killed.ended;

    // Each service's own health, readiness and metrics under /_services/<name>/.
    for (const name of ['push-hub', 'publisher', 'proxy', 'blacklist']) {
      assert.equal((await fetch(`${internal}/_services/${name}/ready`)).status, 200, name);
      const metrics = await (await fetch(`${internal}/_services/${name}/metrics`)).text();
      assert.match(metrics, new RegExp(`service="${name}"`), `${name}'s own metrics`);
    }
    const unknown = await fetch(`${internal}/v9/anything`);
    assert.equal(unknown.status, 404);
    assert.deepEqual(await unknown.json(), { error: 'not found' });
  });

  it('answers the internal API only to the host names it is reached by (DNS rebinding gets 421)', async () => {
    const internal = edge.internalUrl;
    const port = new URL(internal).port;
    const session = `${t.keyPrefix}rebound`;
    for (const host of [
      `attacker.example:${port}`,
      'attacker.example',
      `127.0.0.1.attacker.example:${port}`,
    ]) {
      for (const [method, path] of [
        ['GET', '/v3/apis'],
        ['POST', '/v3/session-blacklist'],
        ['GET', '/_services/proxy/metrics'],
      ] as const) {
        const res = await withHost(
          `${internal}${path}`,
          host,
          method,
          method === 'POST' ? JSON.stringify({ sessionId: session, validityInSeconds: 60 }) : undefined,
        );
        assert.equal(res.status, 421, `${host} ${method} ${path}: ${res.text}`);
        assert.match(res.text, /GATEHOUSE_INTERNAL_HOSTS/);
      }
      // The edge's own liveness answers whatever the host, for probes that name none.
      assert.deepEqual(await withHost(`${internal}/health`, host), { status: 200, text: 'OK' });
    }
    assert.equal(
      (await fetch(`${internal}/v3/session-blacklist/${encodeURIComponent(session)}`)).status,
      404,
      'nothing was blacklisted',
    );
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, 'LOCALHOST'])
      assert.equal((await withHost(`${internal}/v3/apis`, host)).status, 200, host);
  });
});
