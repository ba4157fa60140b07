import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openSse, sleep, waitFor } from '@gatehouse/testkit';
import { sseBytes, sseFrame } from '../../src/transports/sse-transport.ts';
import { type HubFixture, startHubFixture, subs } from '../hub-fixture.ts';

/**
 * Reads SSE text as a browser does (the WHATWG event-stream rules): lines end at CRLF, CR or LF, an
 * empty line dispatches; so a forged line break shows up as an extra field or frame.
 */
function browserFrames(text: string): Array<{ id?: string; event?: string; data: string }> {
  const frames: Array<{ id?: string; event?: string; data: string }> = [];
  let current: { id?: string; event?: string; data: string[] } = { data: [] };
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === '') {
      if (current.data.length > 0) frames.push({ ...current, data: current.data.join('\n') });
      current = { data: [] };
      continue;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') current.data.push(value);
    else if (field === 'event' || field === 'id') current[field] = value;
  }
  return frames;
}

describe('SSE frames', () => {
  it('never put a raw line break into a field, whatever the event holds', () => {
    const forged = 'greeting\r\nevent: admin.command\ndata: {"rm":"-rf"}\r\rid: 0';
    const text = sseFrame({ type: forged, json: '{"a":1,\n"b":"x\r\ny"}', position: '1-0\nevent: x' });
    const frames = browserFrames(text);
    assert.equal(frames.length, 1, text);
    assert.equal(frames[0]!.event, forged.replace(/[\r\n]/g, '\uFFFD'));
    assert.equal(frames[0]!.id, '1-0\uFFFDevent: x');
    assert.equal(frames[0]!.data, '{"a":1,\n"b":"x\ny"}', 'data lines are split and joined with LF');
    assert.equal(text.split(/\r\n|\r|\n/).filter((l) => l === '').length, 2, 'one blank line: one frame');
  });

  it('leave an ordinary event as it was', () => {
    assert.equal(
      sseFrame({ type: 'greeting', json: '{"a":1}', position: '7-0' }),
      'id: 7-0\nevent: greeting\ndata: {"a":1}\n\n',
    );
    assert.equal(sseFrame({ type: 'gw.x', json: '{}', position: undefined }), 'event: gw.x\ndata: {}\n\n');
    assert.equal(
      sseFrame({ type: 'gw.x', json: '{}', position: '3', own: true }),
      'id: 3\nevent: gw.x\norigin: gateway\ndata: {}\n\n',
      "the hub's own events are marked by a field line of their own",
    );
  });
});

describe('SSE bytes', () => {
  it('are the frame as UTF-8, and the same bytes as one HTTP/1.1 chunk', () => {
    for (const text of ['', 'data: {}\n\n', `data: ${'zoë 🙂 '.repeat(700)}\n\n`]) {
      const { frame, chunk } = sseBytes(text);
      const bytes = Buffer.from(text);
      assert.deepEqual(frame, bytes);
      assert.deepEqual(
        chunk,
        Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]),
      );
      assert.equal(frame.buffer, chunk.buffer, 'the frame is a view of the chunk');
    }
  });
});

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

  it('delivers an event whose type holds CR/LF that reached the stream as one frame, forging none', async () => {
    const forged = 'greeting\r\nevent: admin.command\r\ndata: {"forged":true}\r\n\r\nevent: x';
    const res = await fetch(`${f.url}/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: forged }])}`);
    const reader = res.body!.getReader();
    let text = '';
    const decoder = new TextDecoder();
    const read = async (until: (t: string) => boolean) => {
      const deadline = Date.now() + 5000;
      while (!until(text) && Date.now() < deadline) text += decoder.decode((await reader.read()).value);
    };
    await read((t) => t.includes('gw.subscriptions_set'));
    await f.publish(forged, { name: 'alice' });
    await read((t) => t.includes('alice'));
    await reader.cancel();
    const frames = browserFrames(text);
    assert.deepEqual(
      frames.map((fr) => fr.event),
      ['gw.connection.create', 'gw.subscriptions_set', forged.replace(/[\r\n]/g, '\uFFFD')],
    );
    assert.deepEqual(JSON.parse(frames[2]!.data).data, { name: 'alice' });
  });

  it('sends heartbeat comments', async () => {
    const sse = await openSse(`${f.url}/_gw/v1/connection/sse`);
    // 25 of the fixture's 200 ms intervals, and a third of the default 15 s one.
    await waitFor(() => sse.comments.includes('heartbeat'), { timeoutMs: 5000, what: 'a heartbeat' });
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
      ['jwt=not-a-jwt', /^invalid JWT$/],
      [`subscriptions=${encodeURIComponent('[{')}`, /^invalid subscriptions: failed to decode/],
      [`subscriptions=${subs([{ oneOf: [] }])}`, /^invalid subscriptions: subscription 0: eventType/],
      [
        `subscriptions=${subs([{ eventType: 'greeting', oneOf: [{ mood: 'happy' }] }])}`,
        /field "mood" is not defined/,
      ],
      [
        '',
        /^invalid authorization header: authorization credential without a scheme/,
        { authorization: f.jwt({ username: 'x' }) },
      ],
      ['', /^invalid authorization header: invalid JWT$/, { authorization: 'Bearer not-a-jwt' }],
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
    assert.equal(refused.errorBody, 'invalid JWT', 'the one refusal text; the reason is in the log');
    bystander.close();
  });
});

describe('SSE connection rate limit', () => {
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
});
