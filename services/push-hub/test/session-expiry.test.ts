/**
 * A connection ends with the JWT it was admitted with, on every transport: SSE gets
 * `gw.session_expired` and the end of the stream, WebSocket a 4401 close, socket.io
 * `gw.session_expired` then a server disconnect. A client that comes back with a fresh JWT and its
 * position gets what it missed meanwhile. A subscription change carrying a fresh JWT moves the end
 * to that JWT's expiry.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openSse, openWs, sleep, waitFor } from '@gatehouse/testkit';
import { io } from 'socket.io-client';
import { type HubFixture, startHubFixture, subs } from './hub-fixture.ts';

const greetings = [{ eventType: 'greeting' }];

describe('connections end with their JWT', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture({ JWT_CLOCK_LEEWAY: '0' });
  });
  after(() => f?.stop());

  const expiringJwt = (seconds: number) =>
    f.jwt({ username: 'alice', exp: Math.floor(Date.now() / 1000) + seconds });

  it('ends SSE, WebSocket and socket.io connections when the JWT expires; a fresh one resumes', async () => {
    const jwt = expiringJwt(2);
    const sse = await openSse(`${f.url}/_gw/v1/connection/sse?jwt=${jwt}&subscriptions=${subs(greetings)}`);
    const ws = openWs(`${f.wsUrl}/_gw/v1/connection/ws?jwt=${jwt}&subscriptions=${subs(greetings)}`);
    const sio = io(f.url, {
      path: '/_gw/v1/socket.io/',
      auth: { jwt, subscriptions: greetings },
      reconnection: false,
    });
    after(() => {
      sse.close();
      ws.ws.close();
      sio.close();
    });
    const sioEvents: string[] = [];
    sio.onAny((type) => sioEvents.push(type));
    const sioDisconnect = new Promise<string>((resolve) => sio.on('disconnect', resolve));
    await waitFor(() => sse.frames.length >= 2 && ws.events.length >= 2 && sioEvents.length >= 2, {
      what: 'every welcome',
    });
    const seen = await f.publish('greeting', { n: 1 });
    await waitFor(() => sse.events('greeting').length === 1, { what: 'the first event' });

    await sse.ended;
    assert.deepEqual(sse.frames.at(-1)!.event, 'gw.session_expired');
    const wsClose = await ws.closed;
    assert.deepEqual(wsClose, { code: 4401, reason: 'Session expired.' });
    assert.equal(ws.events.at(-1)!['type'], 'gw.session_expired');
    assert.equal(await sioDisconnect, 'io server disconnect');
    assert.equal(sioEvents.at(-1), 'gw.session_expired');
    assert.equal(f.hub.size, 0);

    await f.publish('greeting', { n: 2 });
    const again = await openSse(
      `${f.url}/_gw/v1/connection/sse?jwt=${expiringJwt(3600)}&subscriptions=${subs(greetings)}`,
      { 'last-event-id': seen },
    );
    after(() => again.close());
    await waitFor(() => again.events('greeting').length === 1, { what: 'the event missed meanwhile' });
    assert.deepEqual(again.events('greeting')[0]!['data'], { n: 2 });
  });

  it('moves the end to a fresh JWT given with a subscription change', async () => {
    const sse = await openSse(
      `${f.url}/_gw/v1/connection/sse?jwt=${expiringJwt(2)}&subscriptions=${subs(greetings)}`,
    );
    after(() => sse.close());
    await waitFor(() => sse.frames.length >= 2, { what: 'the welcome' });
    const token = (sse.events('gw.connection.create')[0]!['data'] as { connection_token: string })
      .connection_token;
    const put = await fetch(`${f.url}/_gw/v1/connection/sse/${token}/subscriptions`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${expiringJwt(3600)}` },
      body: JSON.stringify({ subscriptions: greetings }),
    });
    assert.equal(put.status, 204);
    await sleep(3500);
    assert.equal(f.hub.size, 1, 'still open past the first JWT');
    assert.equal(sse.events('gw.session_expired').length, 0);
  });
});
