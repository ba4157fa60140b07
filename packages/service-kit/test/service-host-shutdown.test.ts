/**
 * A stopping host takes no new request over the connections clients (and nginx, upstream) keep
 * alive: every response under way when the stop begins is the last of its connection. Without
 * that, a balancer's idle connection to a stopping replica carries the next client's connect to
 * it, as late as the moment its store is closed (seen: 400 "invalid JWT: redis store is closed").
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { waitFor } from '@gatehouse/testkit';
import { type GatewayService, releaseHttpParserSoon } from '../src/index.ts';
import { startTestHost } from './test-host.ts';

/** A raw HTTP/1.1 connection: what it received, and whether the server ended it. */
function rawConnection(port: number) {
  const socket: Socket = connect(port, '127.0.0.1');
  const conn = { socket, text: '', ended: false };
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (conn.text += chunk));
  socket.on('end', () => (conn.ended = true));
  socket.on('error', () => {});
  return conn;
}

const get = (path: string) => `GET ${path} HTTP/1.1\r\nhost: gatehouse\r\nconnection: keep-alive\r\n\r\n`;

/** A stream that stays open until `end()`, and a request answered only on `answer()`. */
function holdingService() {
  const streams: Array<() => void> = [];
  const waiting: Array<() => void> = [];
  const service: GatewayService = {
    name: 'holding',
    public: (req, res) => {
      if (req.url === '/stream') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: first\n\n');
        streams.push(() => res.end('data: last\n\n'));
      } else if (req.url === '/wait') {
        waiting.push(() => res.end('answered'));
      } else {
        res.end('next');
      }
      return true;
    },
  };
  return { service, streams, waiting };
}

describe('service host: stopping', () => {
  it('ends each kept-alive connection with the response under way, so a stopping host takes no new request', async (t) => {
    const holding = holdingService();
    // A long drain window: before the fix the connections stayed open for Node's keep-alive timeout.
    const host = await startTestHost({ services: [holding.service], publicPort: 0, drainTimeoutMs: 20_000 });
    const stream = rawConnection(host.publicPort!);
    const waiting = rawConnection(host.publicPort!);
    t.after(() => {
      stream.socket.destroy();
      waiting.socket.destroy();
      for (const end of holding.streams) end();
      for (const answer of holding.waiting) answer();
      return host.stop();
    });
    stream.socket.write(get('/stream'));
    waiting.socket.write(get('/wait'));
    await waitFor(() => holding.streams.length === 1 && holding.waiting.length === 1, {
      what: 'both requests under way',
    });

    const stopped = host.stop();
    // The stream's headers went out with keep-alive before the stop: its connection ends after it.
    holding.streams[0]!();
    await waitFor(() => stream.text.includes('data: last'), { what: 'the end of the stream' });
    // Not answered yet when the stop began: it says so in its own headers.
    holding.waiting[0]!();
    await waitFor(() => waiting.text.includes('answered'), { what: 'the waiting answer' });
    assert.match(waiting.text, /\r\nconnection: close\r\n/i, waiting.text);

    // A client (or nginx) that sends its next request over either connection gets no answer from
    // this host: the connection is closed instead, and the request goes to another replica.
    stream.socket.write(get('/next'));
    waiting.socket.write(get('/next'));
    await waitFor(() => stream.ended && waiting.ended, {
      timeoutMs: 3000,
      what: 'both connections ended by the server',
    }).catch(() => {});
    assert.doesNotMatch(stream.text, /next/, 'no request served over the stream connection after it ended');
    assert.doesNotMatch(
      waiting.text,
      /next/,
      'no request served over the waiting connection after its answer',
    );
    assert.ok(stream.ended && waiting.ended, `ended: stream ${stream.ended}, waiting ${waiting.ended}`);
    await stopped;
  });
});

describe('service host: requests under way at the stop', () => {
  it('answers a request under way before it closes its buses and stores', async (t) => {
    const order: string[] = [];
    const waiting: Array<() => void> = [];
    const service: GatewayService = {
      name: 'slow',
      public: (_req, res) => {
        waiting.push(() => {
          order.push('answered');
          res.end('answered');
        });
        return true;
      },
    };
    const host = await startTestHost({
      services: [service],
      publicPort: 0,
      drainTimeoutMs: 10_000,
      closeables: [{ close: () => void order.push('store closed') }],
    });
    const conn = rawConnection(host.publicPort!);
    t.after(() => conn.socket.destroy());
    conn.socket.write(get('/slow'));
    await waitFor(() => waiting.length === 1, { what: 'the request under way' });
    const stopped = host.stop();
    await new Promise((resolve) => setTimeout(resolve, 300));
    waiting[0]!();
    await stopped;
    assert.deepEqual(order, ['answered', 'store closed']);
    await waitFor(() => conn.text.endsWith('answered'), { what: 'the answer at the client' });
  });
});

describe('service host: a stream that outlives the drain', () => {
  it("cuts a stream whose HTTP parser was given back at the drain's deadline, as any other", async (t) => {
    // A stream its service never ends (a client that reads nothing keeps an ended one open too):
    // node's server no longer lists its connection once the parser is released.
    const service: GatewayService = {
      name: 'endless',
      public: (req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream', connection: 'close' });
        res.write('data: first\n\n');
        releaseHttpParserSoon(req, res);
        return true;
      },
    };
    const host = await startTestHost({ services: [service], publicPort: 0, drainTimeoutMs: 300 });
    const stream = rawConnection(host.publicPort!);
    t.after(() => stream.socket.destroy());
    stream.socket.write(get('/stream'));
    await waitFor(() => stream.text.includes('data: first'), { what: 'the stream open' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const outcome = await Promise.race([
      host.stop().then(() => 'stopped'),
      new Promise((resolve) =>
        setTimeout(() => resolve(`still stopping after 10 s: ${host.stopStep()}`), 10_000),
      ),
    ]);
    assert.equal(outcome, 'stopped');
    await waitFor(() => stream.socket.destroyed || stream.ended, { what: 'the stream cut' });
  });
});

describe('service host: an upgraded connection that outlives the drain', () => {
  it("cuts a connection a service took over by an upgrade at the drain's deadline (a WebSocket client that never answers the close)", async (t) => {
    const kept: Array<{ destroyed: boolean }> = [];
    const service: GatewayService = {
      name: 'upgrading',
      upgrade: (_req, socket) => {
        socket.write('HTTP/1.1 101 Switching Protocols\r\nupgrade: test\r\nconnection: upgrade\r\n\r\n');
        kept.push(socket);
        return true;
      },
    };
    const host = await startTestHost({ services: [service], publicPort: 0, drainTimeoutMs: 300 });
    const conn = rawConnection(host.publicPort!);
    t.after(() => conn.socket.destroy());
    conn.socket.write('GET /up HTTP/1.1\r\nhost: gatehouse\r\nconnection: upgrade\r\nupgrade: test\r\n\r\n');
    await waitFor(() => conn.text.includes('101 Switching'), { what: 'the upgrade' });
    const outcome = await Promise.race([
      host.stop().then(() => 'stopped'),
      new Promise((resolve) =>
        setTimeout(() => resolve(`still stopping after 10 s: ${host.stopStep()}`), 10_000),
      ),
    ]);
    assert.equal(outcome, 'stopped');
    assert.ok(kept[0]?.destroyed, 'the upgraded socket is cut');
  });
});

describe('service host: a stop that hangs', () => {
  it('says which step of the stop is under way (a forced exit names it)', async () => {
    class HangingBus {
      close(): Promise<void> {
        return new Promise(() => {});
      }
    }
    const slowService: GatewayService = {
      name: 'slow',
      stop: () => new Promise((resolve) => setTimeout(resolve, 300)),
    };
    const host = await startTestHost({
      services: [slowService],
      closeables: [{ close: () => {} }, new HangingBus()],
    });
    assert.equal(host.stopStep(), undefined, 'nothing under way before the stop');
    const stopping = host.stop();
    assert.equal(host.stopStep(), "the slow service's stop");
    await waitFor(() => host.stopStep() === 'closing HangingBus', {
      timeoutMs: 10_000,
      what: 'the hanging close',
    });
    assert.equal(
      await Promise.race([
        stopping.then(() => 'stopped'),
        new Promise((r) => setTimeout(() => r('still'), 200)),
      ]),
      'still',
    );
  });
});
