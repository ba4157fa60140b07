/**
 * SSE and long-polling over HTTP/2 on the edge's own TLS listener: streams multiplexed on one
 * session each get their events and resume with Last-Event-ID, and the slow-consumer bound is per
 * stream (a stream its client stops reading is cut; the session's other streams go on).
 */
import assert from 'node:assert/strict';
import { connect, constants } from 'node:http2';
import { connect as connectTls } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { type H2SseSession, openH2Session, waitFor } from '@gatehouse/testkit';
import { type HubFixture, startHubFixture, subs } from './hub-fixture.ts';

const path = `/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'greeting' }])}`;

describe('SSE over HTTP/2', () => {
  let f: HubFixture;
  let h2: H2SseSession;
  before(async () => {
    f = await startHubFixture(
      { MAX_BUFFERED_BYTES: String(256 * 1024), HEARTBEAT_INTERVAL: '1h' },
      undefined,
      {
        tls: true,
      },
    );
    h2 = await openH2Session(f.tlsUrl, f.ca!);
  });
  after(async () => {
    h2?.close();
    await f?.stop();
  });

  it('delivers the welcome events and published events on several streams of one session', async () => {
    assert.equal(h2.alpn, 'h2');
    const [a, b] = await Promise.all([h2.open(path), h2.open(path)]);
    assert.equal(a.status, 200);
    await waitFor(() => a.frames.length >= 2 && b.frames.length >= 2, { what: 'welcome events' });
    assert.deepEqual(
      a.frames.map((x) => x.event),
      ['gw.connection.create', 'gw.subscriptions_set'],
    );
    const position = await f.publish('greeting', { n: 1 });
    await waitFor(() => a.frames.length >= 3 && b.frames.length >= 3, { what: 'the event on both streams' });
    assert.equal(a.frames[2]!.event, 'greeting');
    assert.equal(a.frames[2]!.id, position);
    assert.deepEqual(JSON.parse(b.frames[2]!.data).data, { n: 1 });
    a.close();
    b.close();
  });

  it('resumes with Last-Event-ID after a dropped stream', async () => {
    const first = await h2.open(path);
    await waitFor(() => first.frames.length >= 2, { what: 'welcome events' });
    const seen = await f.publish('greeting', { n: 'seen' });
    await waitFor(() => first.frames.length >= 3, { what: 'the first event' });
    first.close();
    await f.publish('greeting', { n: 'missed-1' });
    await f.publish('greeting', { n: 'missed-2' });
    const again = await h2.open(path, { 'last-event-id': seen });
    await waitFor(() => again.frames.filter((x) => x.event === 'greeting').length >= 2, {
      what: 'the missed events',
    });
    assert.deepEqual(
      again.frames.filter((x) => x.event === 'greeting').map((x) => JSON.parse(x.data).data.n),
      ['missed-1', 'missed-2'],
    );
    again.close();
  });

  it('cuts a stream whose client stops reading, and the session goes on', async () => {
    const stalled = await h2.open(path);
    const reading = await h2.open(path);
    await waitFor(() => stalled.frames.length >= 2 && reading.frames.length >= 2, { what: 'welcome events' });
    stalled.pause();
    const payload = 'x'.repeat(32 * 1024);
    let sent = 0;
    const held = f.hub.size;
    while (f.hub.size === held) {
      assert.ok(sent < 400, `the paused stream was still open after ${sent} events of 32 KiB`);
      await f.publish('greeting', { payload });
      sent++;
      await new Promise((r) => setTimeout(r, 5));
    }
    // What the client had received before the cut is still readable; then the stream is reset.
    stalled.resume();
    assert.equal(await stalled.ended, constants.NGHTTP2_CANCEL);
    const before = reading.frames.length;
    await f.publish('greeting', { n: 'after the cut' });
    await waitFor(() => reading.frames.some((x, i) => i >= before && x.data.includes('after the cut')), {
      what: 'the reading stream goes on',
      timeoutMs: 20_000,
    });
    assert.ok(sent > 256 / 32, 'cut only once its own output passed the bound');
    reading.close();
  });

  it('serves HTTP/1.1 over the same TLS listener: a stream, ended when its client sends more', async () => {
    // The TLS listener's HTTP/1.1 connections give their HTTP parser back too (sse-wire.test.ts).
    const { port } = new URL(f.tlsUrl);
    const socket = connectTls({
      port: Number(port),
      host: '127.0.0.1',
      ca: f.ca!,
      servername: 'localhost',
      ALPNProtocols: ['http/1.1'],
    });
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    try {
      socket.write(`GET ${path} HTTP/1.1\r\nhost: hub\r\n\r\n`);
      await waitFor(() => text.includes('gw.subscriptions_set'), { what: 'the welcome over TLS' });
      assert.equal(socket.alpnProtocol, 'http/1.1');
      assert.match(text, /^HTTP\/1\.1 200 [\s\S]*\r\nconnection: close\r\n/i);
      await new Promise((resolve) => setTimeout(resolve, 100));
      await f.publish('greeting', { name: 'over tls' });
      await waitFor(() => text.includes('"name":"over tls"'), { what: 'an event over TLS' });
      // A next request, which node would have queued behind the stream: the connection closes.
      socket.write(`GET ${path} HTTP/1.1\r\nhost: hub\r\n\r\n`);
      await closed;
    } finally {
      socket.destroy();
    }
  });

  it('answers long-polling over HTTP/2', async () => {
    const session = connect(f.tlsUrl, { ca: f.ca! });
    after(() => session.destroy());
    const poll = (cookie?: string) =>
      new Promise<{ status: number; body: string; cookie: string | undefined }>((resolve, reject) => {
        const stream = session.request({
          ':path': `/_gw/v1/connection/longpolling?subscriptions=${subs([{ eventType: 'greeting' }])}`,
          ...(cookie && { cookie }),
        });
        let status = 0;
        let setCookie: string | undefined;
        stream.on('response', (h) => {
          status = Number(h[':status']);
          const c = h['set-cookie'];
          setCookie = Array.isArray(c) ? c.map((x) => x.split(';')[0]).join('; ') : undefined;
        });
        let body = '';
        stream.setEncoding('utf8');
        stream.on('data', (d: string) => (body += d));
        stream.on('end', () => resolve({ status, body, cookie: setCookie }));
        stream.on('error', reject);
      });
    const first = await poll();
    assert.equal(first.status, 200);
    assert.ok(first.cookie, 'the long-poll session cookie');
    await f.publish('greeting', { n: 'long-polled' });
    const second = await poll(first.cookie);
    assert.equal(second.status, 200);
    assert.match(second.body, /long-polled/);
  });
});
