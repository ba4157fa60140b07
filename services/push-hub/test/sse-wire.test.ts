import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { LongPollClient, waitFor } from '@gatehouse/testkit';
import { startHubFixture, subs } from './hub-fixture.ts';

/**
 * The SSE bytes as they leave the hub. Events are written to the socket as pre-framed HTTP/1.1
 * chunks (not through ServerResponse), so these tests read the raw wire and check the framing a
 * proxy or browser relies on.
 */

/** A raw TCP client that keeps everything it read as latin1 text (byte for byte). */
function rawClient(
  url: string,
  request: string,
): { socket: Socket; text: () => string; ended: Promise<void> } {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => {
    text += d;
  });
  const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.write(request);
  return { socket, text: () => text, ended };
}

/** The head and the body after it; the head must end with CRLFCRLF. */
function splitResponse(text: string): { head: string; body: string } {
  const end = text.indexOf('\r\n\r\n');
  assert.ok(end > 0, `no complete head in ${JSON.stringify(text.slice(0, 200))}`);
  return { head: text.slice(0, end), body: text.slice(end + 4) };
}

/**
 * Decodes a chunked body strictly: every chunk's declared size must match the bytes up to its CRLF.
 * Returns the payload and whether the last chunk (size 0) arrived.
 */
function dechunk(body: string): { payload: string; complete: boolean } {
  let at = 0;
  let payload = '';
  while (at < body.length) {
    const lineEnd = body.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = Number.parseInt(body.slice(at, lineEnd), 16);
    assert.ok(/^[0-9a-f]+$/.test(body.slice(at, lineEnd)), `bad chunk size line at ${at}`);
    if (size === 0) {
      assert.equal(body.slice(lineEnd, lineEnd + 4), '\r\n\r\n', 'the last chunk ends with an empty trailer');
      return { payload, complete: true };
    }
    const data = body.slice(lineEnd + 2, lineEnd + 2 + size);
    if (data.length < size) break;
    assert.equal(
      body.slice(lineEnd + 2 + size, lineEnd + 4 + size),
      '\r\n',
      `chunk at ${at} overruns its size`,
    );
    payload += data;
    at = lineEnd + 4 + size;
  }
  return { payload, complete: false };
}

const events = (payload: string) => [...payload.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
const utf8 = (latin1: string) => Buffer.from(latin1, 'latin1').toString('utf8');
const ssePath = `/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'greeting' }])}`;

describe('SSE on the wire', () => {
  it('sends every event as one exact HTTP/1.1 chunk, and ends with the retry hint and the last chunk', async () => {
    const f = await startHubFixture();
    const c = rawClient(f.url, `GET ${ssePath} HTTP/1.1\r\nhost: hub\r\n\r\n`);
    try {
      await waitFor(() => events(dechunk(splitResponse(c.text()).body).payload).length >= 2);
      await f.publish('greeting', { name: 'zoë 🙂' });
      await f.publish('greeting', { name: 'bob' });
      await waitFor(() => events(dechunk(splitResponse(c.text()).body).payload).length >= 4);
    } finally {
      await f.stop();
    }
    await c.ended;
    const { head, body } = splitResponse(c.text());
    assert.match(head, /^HTTP\/1\.1 200 /);
    assert.match(head, /\r\ntransfer-encoding: chunked/i);
    const { payload, complete } = dechunk(body);
    assert.ok(complete, 'the stream ends with the last chunk');
    assert.deepEqual(events(payload), [
      'gw.connection.create',
      'gw.subscriptions_set',
      'greeting',
      'greeting',
    ]);
    assert.match(utf8(payload), /"name":"zoë 🙂"/, 'chunk sizes count bytes, not characters');
    assert.match(payload, /\nretry: \d+\n\n$/, 'a stopping replica tells the client when to come back');
  });

  it('frames a welcome pair with text beyond ASCII by its bytes', async () => {
    // The welcome pair leaves as one chunk made of two events' text: its size must count the
    // UTF-8 bytes of both, not their characters.
    const f = await startHubFixture();
    const path = `/_gw/v1/connection/sse?subscriptions=${subs([{ eventType: 'grüße 🙂' }, { eventType: 'zoë' }])}`;
    const c = rawClient(f.url, `GET ${path} HTTP/1.1\r\nhost: hub\r\n\r\n`);
    try {
      await waitFor(() => events(dechunk(splitResponse(c.text()).body).payload).length >= 2);
      await f.publish('zoë', { name: 'after the welcome' });
      await waitFor(() => events(dechunk(splitResponse(c.text()).body).payload).length >= 3);
    } finally {
      c.socket.destroy();
      await f.stop();
    }
    const { payload } = dechunk(splitResponse(c.text()).body);
    assert.deepEqual(events(payload), ['gw.connection.create', 'gw.subscriptions_set', 'zo\u00c3\u00ab']);
    assert.match(utf8(payload), /"eventType":"grüße 🙂"/);
    assert.match(utf8(payload), /"name":"after the welcome"/);
  });

  it('sends an HTTP/1.0 client a stream without chunk framing, ended by closing', async () => {
    const f = await startHubFixture();
    const c = rawClient(f.url, `GET ${ssePath} HTTP/1.0\r\nhost: hub\r\n\r\n`);
    try {
      await waitFor(() => events(c.text()).length >= 2);
      await f.publish('greeting', { name: 'old client' });
      await waitFor(() => events(c.text()).length >= 3);
    } finally {
      await f.stop();
    }
    await c.ended;
    const { head, body } = splitResponse(c.text());
    assert.doesNotMatch(head, /transfer-encoding/i);
    // Unframed from its first byte: the welcome (at the stream's origin, `id: 0` with the memory
    // stream's epoch, on a stream that never held an event) is the body's start, no chunk size
    // before it.
    assert.match(body, /^id: 0\.[0-9a-f]{8}\nevent: gw\.connection\.create\norigin: gateway\ndata: /);
    assert.deepEqual(events(body), ['gw.connection.create', 'gw.subscriptions_set', 'greeting']);
    assert.match(body, /"name":"old client"/);
  });

  it("says the stream is its connection's last, and ends it when the client sends more or half-closes", async () => {
    // Node's HTTP parser (10 KB a connection) is given back once a stream starts: a byte the client
    // sends after its request, or its end of the connection, closes the stream as node would have.
    const f = await startHubFixture();
    const request = `GET ${ssePath} HTTP/1.1\r\nhost: hub\r\n\r\n`;
    const more = rawClient(f.url, request);
    const halfClosed = rawClient(f.url, request);
    const quiet = rawClient(f.url, request);
    try {
      await waitFor(() => [more, halfClosed, quiet].every((c) => events(c.text()).length >= 2), {
        what: 'three streams open',
      });
      assert.equal(f.hub.size, 3);
      assert.match(splitResponse(quiet.text()).head, /\r\nconnection: close\r\n/i);
      // Let the release happen, then talk.
      await new Promise((resolve) => setTimeout(resolve, 100));
      more.socket.write(`GET ${ssePath} HTTP/1.1\r\nhost: hub\r\n\r\n`);
      halfClosed.socket.end();
      await Promise.all([more.ended, halfClosed.ended]);
      await waitFor(() => f.hub.size === 1, { what: `the hub forgets both (holds ${f.hub.size})` });
      assert.equal(
        (more.text().match(/HTTP\/1\.1 200/g) ?? []).length,
        1,
        'the second request is not served',
      );
      await f.publish('greeting', { name: 'still here' });
      await waitFor(() => quiet.text().includes('"name":"still here"'), {
        what: 'the quiet stream still served',
      });
    } finally {
      quiet.socket.destroy();
      await f.stop();
    }
  });

  it('closes a connection whose client pipelined requests behind its stream, and holds none of them', async () => {
    // In one write: node reads them all at once, before the stream gives its parser back.
    const f = await startHubFixture();
    const request = `GET ${ssePath} HTTP/1.1\r\nhost: hub\r\n\r\n`;
    const c = rawClient(f.url, request.repeat(6));
    try {
      await c.ended;
      await waitFor(() => f.hub.size === 0, { what: `the hub holds nothing (${f.hub.size})` });
    } finally {
      c.socket.destroy();
      await f.stop();
    }
  });

  it('serves a stream pipelined behind an unfinished response on the same connection', async () => {
    const f = await startHubFixture({ LONGPOLL_TIMEOUT: '5s' });
    try {
      const lp = new LongPollClient(f.url);
      await lp.get(`?subscriptions=${subs([{ eventType: 'greeting' }])}`);
      assert.equal((await lp.poll()).length, 2, 'the welcome events');
      const cookie = [...lp.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
      // The poll waits for an event, so the SSE response behind it has no socket until it is answered.
      const c = rawClient(
        f.url,
        `GET /_gw/v1/connection/longpolling HTTP/1.1\r\nhost: hub\r\ncookie: ${cookie}\r\n\r\n` +
          `GET ${ssePath} HTTP/1.1\r\nhost: hub\r\n\r\n`,
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      await f.publish('greeting', { name: 'first' });
      await waitFor(
        () => c.text().includes('text/event-stream') && c.text().includes('gw.subscriptions_set'),
      );
      await f.publish('greeting', { name: 'second' });
      await waitFor(() => c.text().includes('"name":"second"'));
      const text = c.text();
      const sseStart = text.indexOf('HTTP/1.1 200', 1);
      assert.match(text.slice(0, sseStart), /"name":"first"/, 'the poll is answered first');
      const { payload } = dechunk(splitResponse(text.slice(sseStart)).body);
      // The stream was registered when its request was read, so it has both events, in order.
      assert.deepEqual(events(payload), [
        'gw.connection.create',
        'gw.subscriptions_set',
        'greeting',
        'greeting',
      ]);
      assert.match(payload, /"name":"first"[\s\S]*"name":"second"/);
      c.socket.destroy();
    } finally {
      await f.stop();
    }
  });
});
