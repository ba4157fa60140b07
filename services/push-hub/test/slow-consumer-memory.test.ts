/**
 * 1,000 clients that connect and never read again, over real sockets, for SSE, WebSocket and socket.io: once
 * their output passes MAX_BUFFERED_BYTES they are cut off, and the hub holds neither their sockets
 * nor what it could not send them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MiB, mib, settledMemory, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture } from './hub-fixture.ts';
import { openTcpSockets, startStalledClients } from './stalled-clients.ts';

const clients = 1_000;
const maxBuffered = 256 * 1024;
const payload = 'x'.repeat(64 * 1024);
const subscriptions = [{ eventType: 'greeting' }];

describe('slow consumers that never read', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture({
      MAX_BUFFERED_BYTES: String(maxBuffered),
      HEARTBEAT_INTERVAL: '1h',
      // All 1,000 clients connect from 127.0.0.1.
      MAX_CONNECTIONS_PER_IP_PER_MINUTE: '100000',
      MAX_CONNECTIONS_PER_ADDRESS: '100000',
    });
  });
  after(() => f.stop());

  /** Publishes 64 KiB events until the hub has cut every connection off; returns the events sent. */
  async function floodUntilCutOff(): Promise<number> {
    let sent = 0;
    const rssBefore = process.memoryUsage.rss();
    while (f.hub.size > 0) {
      // Without the limit the output grows with every event: stop well before it hurts the machine.
      const grown = process.memoryUsage.rss() - rssBefore;
      assert.ok(
        sent < 200 && grown < 1024 * MiB,
        `${f.hub.size} connections still open after ${sent} events, rss +${mib(grown)}`,
      );
      await f.publish('greeting', { payload });
      sent++;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return sent;
  }

  async function attack(kind: 'sse' | 'ws' | 'socketio'): Promise<void> {
    const before = await settledMemory();
    const socketsBefore = openTcpSockets();
    const started = Date.now();
    const stalled = await startStalledClients(kind, f.url, clients, subscriptions);
    try {
      assert.equal(f.hub.size, clients);
      assert.equal(openTcpSockets(), socketsBefore + clients);
      const events = await floodUntilCutOff();
      // Each connection's socket on the hub's side is gone, although its client still holds it open.
      await waitFor(() => openTcpSockets() === socketsBefore, { timeoutMs: 5_000 }).catch(() => undefined);
      const serverSockets = openTcpSockets() - socketsBefore;
      const held = await settledMemory();
      const grown = held.heap + held.external - before.heap - before.external;
      console.log(
        `${kind}: ${clients} stalled clients cut off after ${events} events of 64 KiB in ${Date.now() - started} ms; ` +
          `hub sockets left open: ${serverSockets}; heap+external held: +${mib(grown)}, rss ${mib(held.rss)}`,
      );
      assert.equal(serverSockets, 0, 'the hub destroyed the sockets of the slow consumers');
      assert.ok(grown < 16 * MiB, `memory held after the cut-off: +${mib(grown)}`);
    } finally {
      await stalled.stop();
    }
  }

  it(`SSE: ${clients} clients that stop reading are destroyed, memory stays flat`, async () => {
    await attack('sse');
  });

  // A closing handshake would keep each socket (and what it did not read) for ws's 30 s close timer.
  it(`WebSocket: ${clients} clients that stop reading are terminated at once, memory stays flat`, async () => {
    await attack('ws');
  });

  it(`socket.io: ${clients} clients that stop reading are cut off at MAX_BUFFERED_BYTES, memory stays flat`, async () => {
    await attack('socketio');
  });
});
