import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { openSse, sleep, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture, subs } from './hub-fixture.ts';

describe('SSE transport', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture({ HEARTBEAT_INTERVAL: '200ms' });
  });
  after(() => f.stop());

  it('sends the welcome events, then matching events with their stream position as id', async () => {
    const sse = await openSse(
      `${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'greeting' }])}`,
    );
    assert.equal(sse.status, 200);
    assert.match(sse.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(sse.headers.get('cache-control'), 'no-cache');
    assert.equal(sse.headers.get('access-control-allow-origin'), '*');
    await waitFor(() => sse.frames.length >= 2);
    assert.deepEqual(
      sse.frames.map((fr) => fr.event),
      ['gw.connection.create', 'gw.subscriptions_set'],
    );
    const created = sse.events('gw.connection.create')[0]!;
    assert.equal(created['specversion'], '0.2');
    assert.equal(typeof (created['data'] as Record<string, unknown>)['connection_token'], 'string');
    assert.deepEqual(sse.events('gw.subscriptions_set')[0]!['data'], [{ eventType: 'greeting', oneOf: [] }]);

    const position = await f.publish('greeting', { name: 'alice' });
    await f.publish('other', { name: 'alice' });
    await waitFor(() => sse.frames.length >= 3);
    await sleep(50);
    assert.equal(sse.frames.length, 3, 'the other type is not delivered');
    assert.equal(sse.frames[2]!.event, 'greeting');
    assert.equal(sse.frames[2]!.id, position);
    assert.deepEqual(JSON.parse(sse.frames[2]!.data).data, { name: 'alice' });
    sse.close();
  });

  it('sends heartbeat comments', async () => {
    const sse = await openSse(`${f.url}/_gw/v1/connection/sse`);
    await waitFor(() => sse.comments.includes('heartbeat'), { timeoutMs: 2000 });
    sse.close();
  });

  it('filters by constraints and infers subscriptions from the JWT', async () => {
    const alice = await openSse(
      `${f.url}/_gw/v1/connection/sse?jwt=${f.jwt({ username: 'alice', jti: 's-a' })}`,
    );
    const bob = await openSse(
      `${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'greeting', oneOf: [{ name: 'bob' }] }])}`,
    );
    await waitFor(() => alice.frames.length >= 2 && bob.frames.length >= 2);
    assert.deepEqual(alice.events('gw.subscriptions_set')[0]!['data'], [
      { eventType: 'greeting', oneOf: [{ name: 'alice' }] },
    ]);
    await f.publish('greeting', { name: 'bob' });
    await f.publish('greeting', { name: 'alice' });
    await waitFor(() => alice.events('greeting').length === 1 && bob.events('greeting').length === 1);
    assert.deepEqual(alice.events('greeting')[0]!['data'], { name: 'alice' });
    assert.deepEqual(bob.events('greeting')[0]!['data'], { name: 'bob' });
    alice.close();
    bob.close();
  });

  it('answers bad requests at once with a reason', async () => {
    const cases: Array<[string, RegExp, Record<string, string>?]> = [
      ['jwt=not-a-jwt', /^invalid JWT: /],
      [`subscriptions=${encodeURIComponent('[{')}`, /^invalid subscriptions: failed to decode/],
      [`subscriptions=${subs([{ oneOf: [] }])}`, /^invalid subscriptions: subscription 0: eventType/],
      [
        `subscriptions=${subs([{ eventType: 'greeting', oneOf: [{ mood: 'happy' }] }])}`,
        /field "mood" is not defined/,
      ],
      ['', /authorization credential without a scheme/, { authorization: f.jwt({ username: 'x' }) }],
    ];
    for (const [query, pattern, headers] of cases) {
      const sse = await openSse(`${f.url}/_gw/v1/connection/sse?${query}`, headers);
      assert.equal(sse.status, 400, query);
      assert.match(sse.errorBody ?? '', pattern);
    }
  });

  it('resumes from Last-Event-ID with the events it missed, or asks to resync', async () => {
    const first = await openSse(
      `${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'resume' }])}`,
    );
    await waitFor(() => first.frames.length >= 2);
    await f.publish('resume', { n: 1 });
    await waitFor(() => first.events('resume').length === 1);
    const lastId = first.frames.at(-1)!.id!;
    first.close();
    await f.publish('resume', { n: 2 });
    await f.publish('noise', {});
    await f.publish('resume', { n: 3 });
    const again = await openSse(
      `${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'resume' }])}`,
      {
        'last-event-id': lastId,
      },
    );
    await waitFor(() => again.events('resume').length === 2);
    assert.deepEqual(
      again.events('resume').map((e) => e['data']),
      [{ n: 2 }, { n: 3 }],
    );
    again.close();

    const lost = await openSse(`${f.url}/_gw/v1/connection/sse?lastEventId=999999`);
    await waitFor(() => lost.events('gw.resync_required').length === 1);
    assert.equal(
      (lost.events('gw.resync_required')[0]!['data'] as Record<string, unknown>)['last_event_id'],
      '999999',
    );
    lost.close();
  });

  it('sends gw.session_killed and ends the stream when the session is blacklisted', async () => {
    const victim = await openSse(
      `${f.url}/_gw/v1/connection/sse?jwt=${f.jwt({ username: 'eve', jti: 'kill-me' })}`,
    );
    const bystander = await openSse(
      `${f.url}/_gw/v1/connection/sse?jwt=${f.jwt({ username: 'eve', jti: 'keep-me' })}`,
    );
    await waitFor(() => victim.frames.length >= 2 && bystander.frames.length >= 2);
    await f.blacklist('kill-me');
    await victim.ended;
    assert.equal(victim.frames.at(-1)!.event, 'gw.session_killed');
    assert.equal(bystander.events('gw.session_killed').length, 0);
    const refused = await openSse(
      `${f.url}/_gw/v1/connection/sse?jwt=${f.jwt({ username: 'eve', jti: 'kill-me' })}`,
    );
    assert.equal(refused.status, 400);
    assert.match(refused.errorBody ?? '', /session kill-me is blacklisted/);
    bystander.close();
  });
});

describe('SSE connection rate limit and subscription check', () => {
  it('refuses connections beyond MAX_CONNECTIONS_PER_MINUTE with 429', async () => {
    const f = await startHubFixture({ MAX_CONNECTIONS_PER_MINUTE: '3' });
    try {
      const open = [];
      for (let i = 0; i < 3; i++) open.push(await openSse(`${f.url}/_gw/v1/connection/sse`));
      assert.deepEqual(
        open.map((c) => c.status),
        [200, 200, 200],
      );
      const refused = await openSse(`${f.url}/_gw/v1/connection/sse`);
      assert.equal(refused.status, 429);
      assert.equal(refused.errorBody, 'Reached maximum number of connections.');
      for (const c of open) c.close();
    } finally {
      await f.stop();
    }
  });

  it('with jwt_validation denies connections without a valid token (403)', async () => {
    const f = await startHubFixture({ SUBSCRIPTION_CHECK: 'jwt_validation' });
    try {
      const denied = await openSse(
        `${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'greeting' }])}`,
      );
      assert.equal(denied.status, 403);
      assert.equal(denied.errorBody, 'Subscription denied.');
      const ok = await openSse(`${f.url}/_gw/v1/connection/sse?jwt=${f.jwt({ username: 'x' })}`);
      assert.equal(ok.status, 200);
      ok.close();
    } finally {
      await f.stop();
    }
  });

  it('with a URL asks that service, passing the subscriptions and the token', async () => {
    const seen: Array<{ auth: string | undefined; body: string }> = [];
    const checker = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        seen.push({ auth: req.headers.authorization, body });
        res.writeHead(body.includes('"secret"') ? 403 : 200).end();
      });
    }).listen(0, '127.0.0.1');
    await new Promise((r) => checker.once('listening', r));
    const f = await startHubFixture({
      SUBSCRIPTION_CHECK: `http://127.0.0.1:${(checker.address() as AddressInfo).port}/check`,
    });
    try {
      const jwt = f.jwt({ username: 'x' });
      const ok = await openSse(
        `${f.url}/_gw/v1/connection/sse?jwt=${jwt}&subscriptions=${subs([{ eventType: 'open' }])}`,
      );
      assert.equal(ok.status, 200);
      const denied = await openSse(
        `${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'secret' }])}`,
      );
      assert.equal(denied.status, 403);
      assert.equal(seen[0]!.auth, `Bearer ${jwt}`);
      assert.deepEqual(JSON.parse(seen[0]!.body), {
        subscriptions: [
          { eventType: 'greeting', oneOf: [{ name: 'x' }] },
          { eventType: 'open', oneOf: [] },
        ],
      });
      ok.close();
    } finally {
      await f.stop();
      checker.close();
    }
  });
});
