/**
 * The TLS rows of the push-hub benchmark (issue 21) measure what their names say: through the
 * benchmark's own client process, against Gatehouse on its TLS listener, HTTP/2 connections really
 * negotiate h2 and share sessions (streams per session), HTTPS/1.1 ones negotiate http/1.1 with a
 * connection each, and every connection gets a published event's stamp; a whole benchmark turn of
 * the HTTP/2 row delivers every publish to every stream.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type PushClient, startPushClient } from '../src/clients/push-client-process.ts';
import { benchEvent, stampNow } from '../src/push-hub/bench-event.ts';
import { gatehouseHub, type RunningHub } from '../src/push-hub/hub-targets.ts';
import { fanoutSession } from '../src/push-hub/sessions.ts';

/** Server-side TCP connections established on `port` (/proc/net/tcp: local port in hex, state 01). */
function establishedOn(port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .filter((line) => {
      const [, local, , state] = line.trim().split(/\s+/);
      return local?.endsWith(`:${hexPort}`) && state === '01';
    }).length;
}

async function deliversToAll(hub: RunningHub, client: PushClient, n: number): Promise<number[]> {
  // The hub subscribes a connection as it answers; give the last ones a moment before publishing.
  await new Promise((r) => setTimeout(r, 200));
  const stamp = stampNow();
  await hub.publish(benchEvent('bench', 'all', stamp));
  const arrived = await client.arrivals(stamp, n, true, 10_000);
  return arrived.latenciesMs;
}

const connectPlan = { batchSize: 10, batchIntervalMs: 20, maxPending: 20, timeoutMs: 30_000 };

describe('TLS rows of the push-hub benchmark', { timeout: 120_000 }, () => {
  let client: PushClient;
  before(() => {
    client = startPushClient(1);
  });
  after(() => client?.stop());

  it('HTTP/2: negotiates h2, carries 3 streams per session and delivers on every stream', async () => {
    const tlsPort = 28072;
    const hub = await gatehouseHub({
      name: 'test-h2',
      transport: 'sse',
      port: 28071,
      apiPort: 28073,
      cpu: 0,
      // The TypeScript sources, as every test runs them: no build needed.
      source: true,
      tls: { port: tlsPort, protocol: 'h2', streamsPerSession: 3 },
    }).start();
    try {
      assert.equal(hub.wire?.protocol, 'tls/h2');
      const c = await client.connect({
        transport: 'sse',
        port: hub.port,
        paths: hub.paths,
        count: 6,
        wire: hub.wire,
        ...connectPlan,
      });
      assert.equal(c.connected, 6, c.firstError);
      assert.deepEqual(c.protocols, { 'tls/h2': 6 });
      assert.equal(establishedOn(tlsPort), 2, '6 streams on 2 sessions');
      assert.equal((await deliversToAll(hub, client, 6)).length, 6);
    } finally {
      await client.closeAll();
      await hub.stop();
    }
  });

  it('HTTPS/1.1: negotiates http/1.1, one connection each, and delivers on every one', async () => {
    const tlsPort = 28075;
    const hub = await gatehouseHub({
      name: 'test-https',
      transport: 'sse',
      port: 28074,
      apiPort: 28076,
      cpu: 0,
      // The TypeScript sources, as every test runs them: no build needed.
      source: true,
      tls: { port: tlsPort, protocol: 'http/1.1' },
    }).start();
    try {
      const c = await client.connect({
        transport: 'sse',
        port: hub.port,
        paths: hub.paths,
        count: 4,
        wire: hub.wire,
        ...connectPlan,
      });
      assert.equal(c.connected, 4, c.firstError);
      assert.deepEqual(c.protocols, { 'tls/http/1.1': 4 });
      assert.equal(establishedOn(tlsPort), 4);
      assert.equal((await deliversToAll(hub, client, 4)).length, 4);
    } finally {
      await client.closeAll();
      await hub.stop();
    }
  });

  it('a benchmark turn of the HTTP/2 row delivers every publish to every stream', async () => {
    const target = gatehouseHub({
      name: 'test-h2-turn',
      transport: 'sse',
      port: 28077,
      apiPort: 28079,
      cpu: 0,
      // The TypeScript sources, as every test runs them: no build needed.
      source: true,
      tls: { port: 28078, protocol: 'h2', streamsPerSession: 3 },
    });
    const n = 9;
    const r = await fanoutSession(
      target,
      client,
      { n, settleMs: 100, batchSize: 10, batchIntervalMs: 20, publishes: 2, gapMs: 300 },
      () => undefined,
    );
    assert.equal(r.connected, n);
    assert.deepEqual(
      r.publishes.map((p) => p.delivered),
      [n, n],
    );
  });
});
