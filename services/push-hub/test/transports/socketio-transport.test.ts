import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '@gatehouse/testkit';
import { io, type Socket } from 'socket.io-client';
import { type HubFixture, startHubFixture } from '../hub-fixture.ts';

function client(
  url: string,
  auth: Record<string, unknown>,
  transports = ['websocket'],
): { socket: Socket; events: Array<[string, Record<string, unknown>]> } {
  const socket = io(url, { path: '/_gw/v1/socket.io/', auth, transports, reconnection: false });
  const events: Array<[string, Record<string, unknown>]> = [];
  socket.onAny((type: string, event: Record<string, unknown>) => events.push([type, event]));
  return { socket, events };
}

describe('socket.io transport', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture();
  });
  after(() => f.stop());

  for (const transport of ['websocket', 'polling']) {
    it(`emits the welcome events and matching events by type (${transport})`, async () => {
      const c = client(f.url, { subscriptions: [{ eventType: 'greeting' }] }, [transport]);
      await waitFor(() => c.events.length >= 2);
      assert.deepEqual(
        c.events.map(([t]) => t),
        ['gw.connection.create', 'gw.subscriptions_set'],
      );
      await f.publish('greeting', { name: 'sio' });
      await waitFor(() => c.events.length >= 3);
      assert.equal(c.events[2]![0], 'greeting');
      assert.deepEqual(c.events[2]![1]['data'], { name: 'sio' });
      c.socket.close();
    });
  }

  it('fails the connect with the reason and status for a bad request', async () => {
    const c = client(f.url, { jwt: 'garbage' });
    const err = await new Promise<Error & { data?: { status: number } }>((resolve) =>
      c.socket.on('connect_error', resolve),
    );
    assert.match(err.message, /^invalid JWT/);
    assert.equal(err.data?.status, 400);
  });

  it('emits gw.session_killed and disconnects on a session kill', async () => {
    const c = client(f.url, { jwt: f.jwt({ username: 's', jti: 'sio-session' }) });
    await waitFor(() => c.events.length >= 2);
    const disconnected = new Promise<string>((resolve) => c.socket.on('disconnect', resolve));
    await f.blacklist('sio-session');
    assert.equal(await disconnected, 'io server disconnect');
    assert.equal(c.events.at(-1)![0], 'gw.session_killed');
  });
});
