import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type HubFixture, startHubFixture, subs } from './hub-fixture.ts';
import { LongPollClient } from '@gatehouse/testkit';

describe('long-polling transport', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture({ LONGPOLL_TIMEOUT: '700ms' });
  });
  after(() => f.stop());

  it('creates a connection with cookies, then polls the welcome events and new matching events', async () => {
    const c = new LongPollClient(f.url);
    const created = await c.get(`?subscriptions=${subs([{ eventType: 'greeting' }])}`);
    assert.equal(created.status, 200);
    assert.equal(created.body, 'ok');
    assert.ok(c.cookies.has('connection_token'));
    assert.ok(c.cookies.has('last_event_id'));
    const welcome = await c.poll();
    assert.deepEqual(
      welcome.map((e) => e['type']),
      ['gw.connection.create', 'gw.subscriptions_set'],
    );
    const started = Date.now();
    assert.deepEqual(await c.poll(), [], 'an empty answer after the poll window');
    assert.ok(Date.now() - started >= 600);
    const waiting = c.poll();
    await f.publish('greeting', { name: 'lp' });
    await f.publish('other', {});
    const events = await waiting;
    assert.deepEqual(
      events.map((e) => e['data']),
      [{ name: 'lp' }],
    );
  });

  it('answers a bad connect at once', async () => {
    const c = new LongPollClient(f.url);
    const r = await c.get('?jwt=bad');
    assert.equal(r.status, 400);
    assert.match(r.text, /^invalid JWT/);
  });

  it('ends the connection with gw.session_killed on the next poll after a blacklisting', async () => {
    const c = new LongPollClient(f.url);
    await c.get(`?jwt=${f.jwt({ username: 'l', jti: 'lp-session' })}`);
    await c.poll();
    await f.blacklist('lp-session');
    const events = await c.poll();
    assert.deepEqual(
      events.map((e) => e['type']),
      ['gw.session_killed'],
    );
    assert.equal(c.cookies.has('connection_token'), false, 'the cookie is cleared');
  });
});
