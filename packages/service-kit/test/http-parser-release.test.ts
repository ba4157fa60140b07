/**
 * A stream sent with `Connection: close` gives node's HTTP parser back (http-parser-release.ts).
 * Raw TCP clients against a real node:http server: the stream still flows, and the connection
 * still ends as it did when the client sends more, half-closes or goes away, or the server is
 * stopped.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { waitFor } from '@gatehouse/testkit';
import { releaseHttpParserSoon } from '../src/http-parser-release.ts';

interface Stream {
  req: IncomingMessage;
  res: ServerResponse;
  closed: boolean;
}

/** A server whose every request is a stream: the head (with `connection`), a first chunk, then held. */
async function streamServer(connection: 'close' | 'keep-alive'): Promise<{
  server: Server;
  port: number;
  streams: Stream[];
}> {
  const streams: Stream[] = [];
  const server = createServer((req, res) => {
    const stream: Stream = { req, res, closed: false };
    streams.push(stream);
    res.on('close', () => {
      stream.closed = true;
    });
    res.writeHead(200, { 'content-type': 'text/event-stream', connection });
    res.write('data: first\n\n');
    releaseHttpParserSoon(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  assert.ok(address !== null && typeof address === 'object');
  return { server, port: address.port, streams };
}

interface Client {
  socket: Socket;
  text: () => string;
  closed: Promise<void>;
}

function client(port: number, request = 'GET /stream HTTP/1.1\r\nhost: test\r\n\r\n'): Client {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => {
    text += d;
  });
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.write(request);
  return { socket, text: () => text, closed };
}

const parserOf = (s: Stream) => (s.req.socket as Socket & { parser?: unknown }).parser;

const servers: Server[] = [];
const clients: Client[] = [];
after(() => {
  for (const c of clients) c.socket.destroy();
  for (const s of servers) s.closeAllConnections();
  for (const s of servers) s.close();
});

async function openStream(connection: 'close' | 'keep-alive' = 'close') {
  const hub = await streamServer(connection);
  servers.push(hub.server);
  const c = client(hub.port);
  clients.push(c);
  await waitFor(() => hub.streams.length === 1 && c.text().includes('data: first'), {
    what: 'the stream open',
  });
  const stream = hub.streams[0]!;
  await waitFor(() => connection === 'keep-alive' || parserOf(stream) === null, {
    what: 'the parser released',
    timeoutMs: 2000,
  }).catch(() => {});
  return { ...hub, c, stream };
}

describe('releaseHttpParserSoon', () => {
  it('gives the parser of a `Connection: close` stream back, and the stream still flows', async () => {
    const { c, stream } = await openStream();
    assert.equal(parserOf(stream), null, "node's parser is given back");
    stream.res.write('data: after\n\n');
    await waitFor(() => c.text().includes('data: after'), { what: 'a write after the release' });
    stream.res.end();
    await c.closed;
    assert.match(c.text(), /0\r\n\r\n$/, 'the last chunk, then the connection closes');
  });

  it('keeps the parser of a keep-alive response: its connection may carry another request', async () => {
    const { stream } = await openStream('keep-alive');
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.notEqual(parserOf(stream), null);
    assert.notEqual(parserOf(stream), undefined);
  });

  it('closes the connection when the client sends anything more', async () => {
    const { c, stream } = await openStream();
    c.socket.write('GET /another HTTP/1.1\r\nhost: test\r\n\r\n');
    await c.closed;
    await waitFor(() => stream.closed, { what: "the response's close event" });
  });

  it('closes the connection of a request whose body is still coming (node had stopped reading it)', async () => {
    const hub = await streamServer('close');
    servers.push(hub.server);
    // More body than node buffers for an unread request: it stops reading the socket.
    const c = client(
      hub.port,
      `GET /stream HTTP/1.1\r\nhost: test\r\ncontent-length: 1000000\r\n\r\n${'x'.repeat(200_000)}`,
    );
    clients.push(c);
    await waitFor(() => c.text().includes('data: first'), { what: 'the stream open' });
    await c.closed;
    await waitFor(() => hub.streams[0]?.closed === true, { what: "the response's close event" });
  });

  it('closes the connection when the client half-closes it', async () => {
    const { c, stream } = await openStream();
    c.socket.end();
    await c.closed;
    await waitFor(() => stream.closed, { what: "the response's close event" });
  });

  it("tells the response when the client's connection is gone", async () => {
    const { c, stream } = await openStream();
    c.socket.resetAndDestroy();
    await waitFor(() => stream.closed, { what: "the response's close event" });
  });

  it("is no longer in node's list of the server's connections (the service host keeps its own)", async () => {
    const { server, c } = await openStream();
    server.closeAllConnections();
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(c.socket.destroyed, false);
  });

  it('gives the parser back once a stream pipelined behind another response gets the connection', async () => {
    const streams: Stream[] = [];
    let answerFirst = () => {};
    const server = createServer((req, res) => {
      if (req.url === '/first') {
        answerFirst = () => res.end('first');
        return;
      }
      const stream: Stream = { req, res, closed: false };
      streams.push(stream);
      res.writeHead(200, { 'content-type': 'text/event-stream', connection: 'close' });
      res.write('data: queued\n\n');
      releaseHttpParserSoon(req, res);
    });
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    const c = client(
      port,
      'GET /first HTTP/1.1\r\nhost: test\r\n\r\nGET /stream HTTP/1.1\r\nhost: test\r\n\r\n',
    );
    clients.push(c);
    await waitFor(() => streams.length === 1, { what: 'the queued stream' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    answerFirst();
    await waitFor(() => c.text().includes('data: queued'), { what: 'the stream after the first answer' });
    await waitFor(() => parserOf(streams[0]!) === null, { what: 'the parser released', timeoutMs: 2000 });
  });

  it('releases more parsers than node pools (1,000), and each stream still ends as it should', async () => {
    const hub = await streamServer('close');
    servers.push(hub.server);
    const many: Client[] = [];
    for (let batch = 0; batch < 6; batch++) {
      for (let i = 0; i < 250; i++) many.push(client(hub.port));
      await waitFor(() => hub.streams.length === many.length, {
        what: `${many.length} streams`,
        timeoutMs: 30_000,
      });
    }
    clients.push(...many);
    await waitFor(() => hub.streams.every((s) => parserOf(s) === null), {
      what: 'every parser released',
      timeoutMs: 10_000,
    });
    for (const s of hub.streams) s.res.write('data: all\n\n');
    await waitFor(() => many.every((c) => c.text().includes('data: all')), {
      what: 'a write to every stream',
      timeoutMs: 30_000,
    });
    for (const c of many.slice(0, 750)) c.socket.destroy();
    await waitFor(() => hub.streams.filter((s) => s.closed).length === 750, {
      what: '750 closed',
      timeoutMs: 30_000,
    });
    for (const s of hub.streams) s.res.end();
    await Promise.all(many.slice(750).map((c) => c.closed));
  });
});
