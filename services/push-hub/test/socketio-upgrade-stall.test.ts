// test-lane: alone (it stops a hub for 12 s against engine.io's timers, which a second file's load moves)
/**
 * A socket.io client whose upgrade to WebSocket is slow must not be left stuck. engine.io's client
 * pauses its polling once the probe is answered and waits for the poll in flight to end; if the
 * server gives up on the upgrade first (its `upgradeTimeout`) and closes the probe, the client never
 * resumes polling and hears nothing until its ping timeout (45 s), a reconnect storm's fate on a
 * loaded replica. Made here with a hub stopped (SIGSTOP) for 12 s just after it answered the probe:
 * the client must then get the next event over its connection, upgraded or not.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { io, type Socket } from 'socket.io-client';
import {
  dependencyAddress,
  type ServiceProcess,
  sleep,
  spawnService,
  uniqueName,
  waitFor,
} from '@gatehouse/testkit';

describe('a socket.io upgrade held up for longer than 10 s', () => {
  const run = uniqueName('sio-stall');
  let hub: ServiceProcess;
  let publisher: ServiceProcess;
  const sockets: Socket[] = [];
  const env = {
    FANOUT_BUS: 'redis',
    CONTROL_BUS: 'redis',
    STORE: 'redis',
    REDIS_URL: dependencyAddress.redisUrl,
    STORE_KEY_PREFIX: `${run}:`,
    JWT_SECRET_KEY: 'socketio-upgrade-stall-secret-long-enough',
    TOKEN_SECRET: `${run}-token-secret`,
  };
  before(async () => {
    hub = await spawnService({
      entry: 'services/push-hub/src/main.ts',
      name: 'hub',
      publicPort: true,
      env: { ...env, REPLICA_ID: `${run}-hub` },
      readyTimeoutMs: 60_000,
    });
    publisher = await spawnService({
      entry: 'services/publisher/src/main.ts',
      name: 'publisher',
      publicPort: true,
      env,
      readyTimeoutMs: 60_000,
    });
  });
  after(async () => {
    for (const s of sockets) s.close();
    if (hub) process.kill(hub.pid, 'SIGCONT');
    await Promise.all([hub?.stop(), publisher?.stop()]);
  });

  it('ends with the client still receiving', { timeout: 120_000 }, async () => {
    const received: string[] = [];
    const socket = io(hub.publicUrl!, {
      path: '/_gw/v1/socket.io/',
      reconnection: false,
      auth: { subscriptions: [{ eventType: 'greeting' }] },
    });
    sockets.push(socket);
    socket.onAny((type: string) => received.push(type));
    let stoppedAt: number | undefined;
    // The probe's pong has come: stop the hub before it can end the client's poll in flight.
    socket.io.engine.on('upgrading', () => {
      if (stoppedAt !== undefined) return;
      process.kill(hub.pid, 'SIGSTOP');
      stoppedAt = Date.now();
    });
    await waitFor(() => stoppedAt !== undefined, { timeoutMs: 30_000, what: 'the probe answered' });
    await sleep(12_000);
    process.kill(hub.pid, 'SIGCONT');
    await sleep(2_000);
    const res = await fetch(`${publisher.publicUrl}/_gw/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        specversion: '1.0',
        id: `${run}-1`,
        source: 'test',
        type: 'greeting',
        data: {},
      }),
    });
    assert.ok(res.ok, await res.text());
    await waitFor(() => received.includes('greeting'), {
      timeoutMs: 20_000,
      what: `the event after the stall (transport ${socket.io.engine.transport.name}, connected ${socket.connected}; got ${received.join(',')})`,
    });
  });
});
