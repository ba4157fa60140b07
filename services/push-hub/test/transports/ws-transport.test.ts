import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { openWs as connect, waitFor } from '@gatehouse/testkit';
import { withPosition } from '../../src/transports/ws-transport.ts';
import { type HubFixture, startHubFixture, subs } from '../hub-fixture.ts';

describe('WebSocket transport', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture({ HEARTBEAT_INTERVAL: '100ms' });
  });
  after(() => f.stop());

  it('sends the welcome events, then one text frame per matching event', async () => {
    const c = connect(`${f.wsUrl}/_gw/v1/connection/ws?subscriptions=${subs([{ eventType: 'greeting' }])}`);
    await waitFor(() => c.events.length >= 2);
    assert.deepEqual(
      c.events.map((e) => e['type']),
      ['gw.connection.create', 'gw.subscriptions_set'],
    );
    await f.publish('greeting', { name: 'ws' });
    await f.publish('ignored', {});
    await waitFor(() => c.events.length >= 3);
    assert.equal(c.events[2]!['type'], 'greeting');
    assert.deepEqual(c.events[2]!['data'], { name: 'ws' });
    c.ws.close();
  });

  it('pings the client to keep the connection alive', async () => {
    const c = connect(`${f.wsUrl}/_gw/v1/connection/ws`);
    await once(c.ws, 'ping');
    c.ws.close();
  });

  it('closes with 1003 when the client sends a frame', async () => {
    const c = connect(`${f.wsUrl}/_gw/v1/connection/ws`);
    await waitFor(() => c.events.length >= 2);
    c.ws.send('hello?');
    const { code, reason } = await c.closed;
    assert.equal(code, 1003);
    assert.match(reason, /cannot be used for two-way communication/);
  });

  it('closes a rejected connect with 4000 + status and the reason', async () => {
    const bad = await connect(`${f.wsUrl}/_gw/v1/connection/ws?jwt=nope`).closed;
    assert.equal(bad.code, 4400);
    assert.match(bad.reason, /^invalid JWT/);
    const badSubs = await connect(`${f.wsUrl}/_gw/v1/connection/ws?subscriptions=%5B1%5D`).closed;
    assert.equal(badSubs.code, 4400);
    assert.match(badSubs.reason, /invalid subscriptions/);
  });

  it('closes with 1000 "Session killed." when the session is blacklisted', async () => {
    const c = connect(`${f.wsUrl}/_gw/v1/connection/ws?jwt=${f.jwt({ username: 'w', jti: 'ws-session' })}`);
    await waitFor(() => c.events.length >= 2);
    await f.blacklist('ws-session');
    const { code, reason } = await c.closed;
    assert.equal(code, 1000);
    assert.equal(reason, 'Session killed.');
    assert.equal(c.events.at(-1)!['type'], 'gw.session_killed');
  });

  it('adds the position to an event as the last member, so it wins over one the publisher sent', () => {
    assert.deepEqual(JSON.parse(withPosition('{"type":"t","gwposition":"forged"}  ', '0-7')), {
      type: 't',
      gwposition: '0-7',
    });
    assert.deepEqual(JSON.parse(withPosition('{ }', '3')), { gwposition: '3' });
  });
});
