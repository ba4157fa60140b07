/**
 * The hub has no idle time-out: an SSE stream and a WebSocket that carry no event for longer than
 * any server time-out Node applies (`headersTimeout` 60 s, `keepAliveTimeout` 5 s; `server.timeout`
 * is off) or a proxy's usual read time-out (nginx's 60 s) stay open and get the next event. What
 * keeps them open is the heartbeat (HEARTBEAT_INTERVAL, 15 s by default): a `: heartbeat` comment
 * on SSE, a ping on a WebSocket. The ping is also how a dead WebSocket peer is found: a client that
 * stops answering pings is closed by the hub (checked on a second hub with a short heartbeat).
 *
 * Real processes (the hub as it runs in production, with every time-out at its default), events
 * from the publisher over Redis. Both idle waits run at once, so the file costs one of them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  dependencyAddress,
  openSse,
  type ServiceProcess,
  type SseConnection,
  sleep,
  spawnService,
  uniqueName,
  waitFor,
  type WsTestClient,
} from '@gatehouse/testkit';
import WebSocket from 'ws';

/** Longer than `headersTimeout` (60 s), the longest server time-out below `requestTimeout` (300 s). */
const idleMs = 65_000;
/** The short heartbeat of the hub that must find a silent WebSocket peer. */
const shortHeartbeatMs = 500;

const run = uniqueName('idle');
const eventType = 'idle.greeting';
const subscriptions = encodeURIComponent(JSON.stringify([{ eventType }]));
const shared = {
  FANOUT_BUS: 'redis',
  CONTROL_BUS: 'redis',
  STORE: 'redis',
  REDIS_URL: dependencyAddress.redisUrl,
  STORE_KEY_PREFIX: `${run}:`,
  JWT_SECRET_KEY: 'idle-connections-secret-long-enough',
  TOKEN_SECRET: `${run}-token-secret`,
};

describe('idle connections', { concurrency: true }, () => {
  let hub: ServiceProcess;
  let shortHeartbeatHub: ServiceProcess;
  let publisher: ServiceProcess;
  const streams: SseConnection[] = [];
  const sockets: WebSocket[] = [];

  before(async () => {
    [hub, shortHeartbeatHub, publisher] = await Promise.all([
      // Every time-out and the heartbeat at their defaults.
      spawnService({
        entry: 'services/push-hub/src/main.ts',
        name: 'hub',
        publicPort: true,
        env: { ...shared, REPLICA_ID: `${run}-hub` },
      }),
      spawnService({
        entry: 'services/push-hub/src/main.ts',
        name: 'short-heartbeat-hub',
        publicPort: true,
        env: {
          ...shared,
          REPLICA_ID: `${run}-short`,
          HEARTBEAT_INTERVAL: `${shortHeartbeatMs}ms`,
        },
      }),
      spawnService({
        entry: 'services/publisher/src/main.ts',
        name: 'publisher',
        publicPort: true,
        env: shared,
      }),
    ]);
  });

  after(async () => {
    for (const s of streams) s.close();
    for (const ws of sockets) ws.terminate();
    await Promise.all([hub?.stop(), shortHeartbeatHub?.stop(), publisher?.stop()]);
  });

  async function publish(id: string): Promise<void> {
    const res = await fetch(`${publisher.publicUrl}/_gw/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ specversion: '1.0', id, source: 'idle-test', type: eventType, data: { id } }),
      signal: AbortSignal.timeout(10_000),
    });
    assert.equal(res.status, 202, await res.text());
  }

  /** A WebSocket client as testkit's openWs, with ws's client options (`autoPong`). */
  function ws(origin: string, options: WebSocket.ClientOptions = {}): WsTestClient {
    const socket = new WebSocket(
      `${origin.replace('http', 'ws')}/_gw/v1/connection/ws?subscriptions=${subscriptions}`,
      options,
    );
    sockets.push(socket);
    const events: Array<Record<string, unknown>> = [];
    socket.on('message', (data) => events.push(JSON.parse(data.toString()) as Record<string, unknown>));
    socket.on('error', () => {});
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    return { ws: socket, events, closed };
  }

  const welcomed = (events: Array<Record<string, unknown>>) =>
    events.some((e) => e['type'] === 'gw.connection.create');
  const got = (events: Array<Record<string, unknown>>, id: string) =>
    events.some((e) => e['type'] === eventType && e['id'] === id);

  it(`keeps an SSE stream open through ${idleMs / 1000} s without events, then delivers`, async () => {
    const sse = await openSse(`${hub.publicUrl}/_gw/v1/connection/sse?subscriptions=${subscriptions}`);
    streams.push(sse);
    assert.equal(sse.status, 200, sse.errorBody);
    await waitFor(() => welcomed(sse.events()), { what: 'the SSE welcome' });
    let endedAt: number | undefined;
    const start = Date.now();
    void sse.ended.then(() => {
      endedAt = Date.now() - start;
    });

    await sleep(idleMs);
    assert.equal(endedAt, undefined, `the hub ended the idle SSE stream after ${endedAt} ms`);
    const id = `${run}-sse`;
    await publish(id);
    await waitFor(() => got(sse.events(), id), { what: 'the event after the idle time on SSE' });
    // The same stream: one welcome, no reconnect in between.
    assert.equal(sse.events('gw.connection.create').length, 1);
    assert.equal(endedAt, undefined);
  });

  it(`keeps a WebSocket that answers pings open through ${idleMs / 1000} s without events, then delivers`, async () => {
    const client = ws(hub.publicUrl!);
    let pings = 0;
    client.ws.on('ping', () => pings++);
    await waitFor(() => welcomed(client.events), { what: 'the WebSocket welcome' });
    let closedWith: string | undefined;
    void client.closed.then(({ code, reason }) => {
      closedWith = `${code} ${reason}`;
    });

    await sleep(idleMs);
    assert.equal(closedWith, undefined, `the hub closed the idle WebSocket: ${closedWith}`);
    assert.equal(client.ws.readyState, WebSocket.OPEN);
    // The hub's liveness check ran meanwhile (15 s apart by default), and was answered (ws does).
    assert.ok(pings >= 2, `${pings} pings in ${idleMs} ms`);
    const id = `${run}-ws`;
    await publish(id);
    await waitFor(() => got(client.events, id), { what: 'the event after the idle time on the WebSocket' });
    assert.equal(closedWith, undefined);
  });

  it('closes a WebSocket whose client stops answering pings, and only that one', async () => {
    const silent = ws(shortHeartbeatHub.publicUrl!, { autoPong: false });
    const answering = ws(shortHeartbeatHub.publicUrl!);
    let pingsUnanswered = 0;
    silent.ws.on('ping', () => pingsUnanswered++);
    await waitFor(() => welcomed(silent.events) && welcomed(answering.events), { what: 'both welcomes' });
    const start = Date.now();

    const closed = await Promise.race([silent.closed, sleep(20 * shortHeartbeatMs).then(() => undefined)]);
    assert.ok(
      closed,
      `a client not answering ${pingsUnanswered} pings still open after ${Date.now() - start} ms`,
    );
    // Dropped without a close handshake: a dead peer would not answer one.
    assert.equal(closed.code, 1006);
    assert.ok(pingsUnanswered >= 1, 'closed before the hub sent any ping');

    // The client that answers is still open several heartbeats later, and still gets events.
    await sleep(5 * shortHeartbeatMs);
    assert.equal(answering.ws.readyState, WebSocket.OPEN);
    const id = `${run}-answering`;
    await publish(id);
    // Generous: the box may be at load 10 beside the deployment stages (CI).
    await waitFor(() => got(answering.events, id), {
      what: 'the event on the answering WebSocket',
      timeoutMs: 30_000,
    });
  });
});
