/**
 * Reconnect timing against small stand-in servers that say when to come back: an SSE stream that
 * ends with a `retry:` hint, a WebSocket closed with 1012 (a draining replica), a connect answered
 * 401. The backoff is set far from what the server asks, so only honouring it passes.
 */
import assert from 'node:assert/strict';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { sleep, waitFor } from '@gatehouse/testkit';
import { WebSocketServer } from 'ws';
import { Gatehouse } from '../src/index.ts';

const welcome = (token: string) =>
  JSON.stringify({
    specversion: '0.2',
    id: `w-${Math.random()}`,
    type: 'gw.connection.create',
    source: 'gatehouse',
    data: { connection_token: token },
  });

describe('Gatehouse reconnect timing', () => {
  const servers: Server[] = [];
  const clients: Gatehouse[] = [];
  after(async () => {
    for (const c of clients) c.close();
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
  });

  async function serve(handler: RequestListener): Promise<{ url: string; server: Server }> {
    const server = createServer(handler);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
  }

  it('sse: waits the retry: hint of a stream that ended, then resumes with Last-Event-ID', async () => {
    const connects: Array<{ at: number; lastEventId: string | undefined }> = [];
    const { url } = await serve((req, res) => {
      connects.push({ at: Date.now(), lastEventId: req.headers['last-event-id'] as string | undefined });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`event: gw.connection.create\norigin: gateway\ndata: ${welcome('t')}\n\n`);
      if (connects.length === 1)
        res.end(
          `id: p-7\nevent: x\ndata: {"specversion":"1.0","id":"1","type":"x","source":"s"}\n\nretry: 1500\n\n`,
        );
    });
    const gw = new Gatehouse(url, { transports: ['sse'], backoff: { initialMs: 5, maxMs: 5 } });
    clients.push(gw);
    await waitFor(() => connects.length === 2, { timeoutMs: 10_000 });
    const gap = connects[1]!.at - connects[0]!.at;
    assert.ok(gap >= 1400, `came back after ${gap} ms, the hint was 1500`);
    assert.equal(connects[1]!.lastEventId, 'p-7');
  });

  it('websocket: comes back at once after close 1012, whatever the backoff, resuming from gwposition', async () => {
    const { url, server } = await serve((_req, res) => res.end());
    const wss = new WebSocketServer({ server });
    const connects: Array<{ at: number; url: string }> = [];
    wss.on('connection', (ws, req) => {
      connects.push({ at: Date.now(), url: req.url ?? '' });
      ws.send(JSON.stringify({ ...JSON.parse(welcome('t')), gwcontrol: '' }));
      ws.send(
        JSON.stringify({
          specversion: '1.0',
          id: `${connects.length}`,
          type: 'x',
          source: 's',
          gwposition: `p-${connects.length}`,
        }),
      );
      if (connects.length <= 3) ws.close(1012, 'Service restart.');
    });
    const gw = new Gatehouse(url, {
      transports: ['websocket'],
      backoff: { initialMs: 60_000, maxMs: 60_000 },
    });
    clients.push(gw);
    await waitFor(() => connects.length === 4, { timeoutMs: 20_000, what: '3 reconnects' });
    // Far below one backoff of 60 s, with room for a loaded machine.
    assert.ok(
      connects[3]!.at - connects[0]!.at < 10_000,
      `3 reconnects in ${connects[3]!.at - connects[0]!.at} ms`,
    );
    assert.match(connects[3]!.url, /[?&]lastEventId=p-3(&|$)/);
    assert.match(connects[3]!.url, /[?&]positions=true/);
    wss.close();
  });

  it('websocket: a connect refused with close 4429 backs off and says status 429', async () => {
    const { url, server } = await serve((_req, res) => res.end());
    const wss = new WebSocketServer({ server });
    let connects = 0;
    wss.on('connection', (ws) => {
      connects++;
      ws.close(4429, 'Too many connections.');
    });
    const gw = new Gatehouse(url, { transports: ['websocket'], backoff: { initialMs: 50, maxMs: 50 } });
    clients.push(gw);
    const states: Array<{ state: string; status?: number; reason?: string; code?: string }> = [];
    gw.on('state', (s) => states.push(s));
    await waitFor(() => connects >= 2, { timeoutMs: 10_000, what: 'a second connect' });
    const refusal = states.find((s) => s.state === 'reconnecting');
    assert.equal(refusal?.status, 429, JSON.stringify(states));
    assert.equal(refusal?.code, 'refused');
    assert.match(refusal?.reason ?? '', /Too many connections/);
    gw.close();
    wss.close();
  });

  it('stops after a 401 without a token function, and after a token function that gives the same token', async () => {
    let connects = 0;
    const { url } = await serve((_req, res) => {
      connects++;
      res.writeHead(401, { 'content-type': 'text/plain' }).end('Unauthorized.');
    });
    const plain = new Gatehouse(url, {
      transports: ['sse'],
      token: 'a',
      backoff: { initialMs: 5, maxMs: 5 },
    });
    clients.push(plain);
    await waitFor(() => plain.state.state === 'closed', { timeoutMs: 10_000 });
    assert.match((plain.state as { reason: string }).reason, /401 Unauthorized\./);
    assert.equal((plain.state as { status?: number }).status, 401);
    let calls = 0;
    const same = new Gatehouse(url, {
      transports: ['sse'],
      token: () => {
        calls++;
        return 'same';
      },
      backoff: { initialMs: 5, maxMs: 5 },
    });
    clients.push(same);
    await waitFor(() => same.state.state === 'closed', { timeoutMs: 10_000 });
    await sleep(200);
    assert.equal(connects, 2, 'one connect each, no retry');
    assert.equal(calls, 2, 'asked at connect, and again after the 401');
  });

  for (const transport of ['sse', 'longpolling'] as const) {
    it(`${transport}: a refused connect (429) waits its Retry-After, and says its status`, async () => {
      const connects: number[] = [];
      const { url } = await serve((_req, res) => {
        connects.push(Date.now());
        if (connects.length === 1) {
          res
            .writeHead(429, { 'content-type': 'text/plain', 'retry-after': '2' })
            .end('Too many connections.');
          return;
        }
        res.writeHead(200, {
          'content-type': transport === 'sse' ? 'text/event-stream' : 'application/json',
        });
        if (transport === 'sse')
          res.write(`event: gw.connection.create\norigin: gateway\ndata: ${welcome('t')}\n\n`);
        else
          res.end(
            JSON.stringify({ last_event_id: 'p-1', gateway_events: 1, events: [JSON.parse(welcome('t'))] }),
          );
      });
      const gw = new Gatehouse(url, { transports: [transport], backoff: { initialMs: 5, maxMs: 5 } });
      clients.push(gw);
      const states: Array<{ state: string; status?: number; code?: string }> = [];
      gw.on('state', (s) => states.push(s));
      await waitFor(() => connects.length >= 2, { timeoutMs: 15_000, what: 'the second connect' });
      const gap = connects[1]! - connects[0]!;
      assert.ok(gap >= 1900, `came back after ${gap} ms, Retry-After was 2 s`);
      assert.ok(gap < 4500, `came back after ${gap} ms, long after Retry-After`);
      const refusal = states.find((s) => s.state === 'reconnecting');
      assert.equal(refusal?.status, 429, JSON.stringify(states));
      assert.equal(refusal?.code, 'refused');
      gw.close();
    });
  }

  for (const transport of ['sse', 'longpolling'] as const) {
    it(`${transport}: drops a connection that hears nothing for idleTimeoutMs and makes it again`, async () => {
      let connects = 0;
      const { url } = await serve((req, res) => {
        connects++;
        if (transport === 'sse') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(`event: gw.connection.create\norigin: gateway\ndata: ${welcome('t')}\n\n`);
        } else if (!req.url?.includes('pollToken=')) {
          res.writeHead(200, { 'gatehouse-connection-token': 't' }).end('"ok"');
        }
        // Then silence, the socket left open: a network that died without a word.
      });
      const gw = new Gatehouse(url, {
        transports: [transport],
        idleTimeoutMs: 400,
        backoff: { initialMs: 5, maxMs: 5 },
      });
      clients.push(gw);
      await waitFor(() => connects >= 3, { timeoutMs: 10_000, what: 'connections made again' });
      assert.notEqual(gw.state.state, 'closed');
    });
  }

  it('falls back from an SSE stream a proxy buffers (headers through, events held) after openTimeoutMs', async () => {
    const { url } = await serve((req, res) => {
      if (req.url?.startsWith('/_gw/v1/connection/sse')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.flushHeaders();
        return;
      }
      if (!req.url?.includes('pollToken='))
        res.writeHead(200, { 'gatehouse-connection-token': 't' }).end('"ok"');
      else
        res.end(
          JSON.stringify({ last_event_id: '1', gateway_events: 1, events: [JSON.parse(welcome('t'))] }),
        );
    });
    const gw = new Gatehouse(url, { transports: ['sse', 'longpolling'], openTimeoutMs: 500 });
    clients.push(gw);
    await waitFor(() => gw.transport === 'longpolling', { timeoutMs: 10_000, what: 'long-polling' });
  });
});
