/**
 * MAX_CONNECTIONS_PER_ADDRESS and MAX_CONNECTIONS through the hub's own port, on every transport,
 * from distinct loopback addresses (127.0.0.2, 127.0.0.3, …): the connection past an address's cap
 * is refused 429 with Retry-After before it starts (an SSE or long-poll status, a refused WebSocket
 * upgrade, a refused engine.io handshake), another address is still admitted, the one past the
 * replica's cap is refused 503 with Retry-After, and every place comes back when its connection
 * ends: closed by the client, killed, or (long-polling) not polled for LONGPOLL_SESSION_TTL.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '@gatehouse/testkit';
import WebSocket from 'ws';
import { type HubFixture, startHubFixture, subs } from './hub-fixture.ts';

const wanted = subs([{ eventType: 'greeting' }]);

/** A connect's answer; `close` ends what it opened (nothing for a refusal). */
interface Opened {
  status: number;
  retryAfter: string | undefined;
  /** The first bytes of what it received (SSE: the welcome events). */
  text(): string;
  close(): void;
  /** Long-polling: the connection's token, and one poll of it, which keeps it (and its place) alive. */
  token?: string;
  poll?(): Promise<void>;
}

/** A GET from `from`, answered at its head; the body keeps coming into `text()`. */
function get(url: string, from: string, method = 'GET', body?: string): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, localAddress: from, agent: false }, (res) => {
      const token = res.headers['gatehouse-connection-token'];
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (text.length < 64 * 1024) text += chunk;
      });
      res.on('error', () => {});
      resolve({
        status: res.statusCode ?? 0,
        retryAfter: res.headers['retry-after'],
        text: () => text,
        close: () => req.destroy(),
        ...(typeof token === 'string' && {
          token,
          poll: async () => {
            const polled = await get(`${url}&pollToken=${token}`, from);
            await new Promise((r) => setTimeout(r, 600));
            polled.close();
          },
        }),
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

function openWs(url: string, from: string): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { localAddress: from, perMessageDeflate: false });
    ws.on('open', () =>
      resolve({ status: 101, retryAfter: undefined, text: () => '', close: () => ws.terminate() }),
    );
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      ws.terminate();
      resolve({
        status: res.statusCode ?? 0,
        retryAfter: res.headers['retry-after'],
        text: () => '',
        close() {},
      });
    });
    ws.on('error', (err) => reject(err));
  });
}

/**
 * An engine.io polling handshake; `close` sends the session's close packet. `emptySid` spells the
 * handshake with an empty session id (`&sid=`, or a last `sid` that is empty), which engine.io
 * takes for a handshake too.
 */
async function openEngineSession(base: string, from: string, emptySid = ''): Promise<Opened> {
  const path = `${base}/_gw/v1/socket.io/?EIO=4&transport=polling`;
  const opened = await get(path + emptySid, from);
  if (opened.status !== 200) return opened;
  await waitFor(() => opened.text().includes('"sid"'), { what: 'the engine.io open packet' });
  const sid = /"sid":"([^"]+)"/.exec(opened.text())![1]!;
  return {
    ...opened,
    close: () => {
      get(`${path}&sid=${sid}`, from, 'POST', '1').then(
        (r) => r.close(),
        () => {},
      );
    },
  };
}

type Transport =
  | 'sse'
  | 'ws'
  | 'socketio-polling'
  | 'socketio-polling-empty-sid'
  | 'socketio-polling-last-sid-empty'
  | 'socketio-websocket'
  | 'socketio-websocket-empty-sid'
  | 'longpolling';

function opener(f: HubFixture, transport: Transport): (from: string) => Promise<Opened> {
  switch (transport) {
    case 'sse':
      return (from) => get(`${f.url}/_gw/v1/connection/sse?subscriptions=${wanted}`, from);
    case 'ws':
      return (from) => openWs(`${f.wsUrl}/_gw/v1/connection/ws?subscriptions=${wanted}`, from);
    case 'socketio-polling':
      return (from) => openEngineSession(f.url, from);
    case 'socketio-polling-empty-sid':
      return (from) => openEngineSession(f.url, from, '&sid=');
    case 'socketio-polling-last-sid-empty':
      return (from) => openEngineSession(f.url, from, '&sid=x&sid=');
    case 'socketio-websocket-empty-sid':
      return (from) => openWs(`${f.wsUrl}/_gw/v1/socket.io/?EIO=4&transport=websocket&sid=`, from);
    case 'socketio-websocket':
      return (from) => openWs(`${f.wsUrl}/_gw/v1/socket.io/?EIO=4&transport=websocket`, from);
    case 'longpolling':
      // No cookie: each is a new long-poll connection, which lives until it goes unpolled for the TTL.
      return (from) => get(`${f.url}/_gw/v1/connection/longpolling?subscriptions=${wanted}`, from);
  }
}

const admitted = (o: Opened) => o.status === 200 || o.status === 101;

describe('connection caps', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture({
      MAX_CONNECTIONS_PER_ADDRESS: '2',
      // Short, so a long-poll connection's place comes back within the test.
      LONGPOLL_TIMEOUT: '500ms',
      LONGPOLL_SESSION_TTL: '2s',
    });
  });
  after(() => f.stop());

  const transports: Transport[] = [
    'sse',
    'ws',
    'socketio-polling',
    'socketio-polling-empty-sid',
    'socketio-polling-last-sid-empty',
    'socketio-websocket',
    'socketio-websocket-empty-sid',
    'longpolling',
  ];
  for (const [i, transport] of transports.entries()) {
    it(`${transport}: refuses the connection past MAX_CONNECTIONS_PER_ADDRESS with 429 and Retry-After, admits another address, and gives the place back when one ends`, async () => {
      const open = opener(f, transport);
      // Addresses of their own per transport: places of one test do not linger into the next.
      const crowded = `127.0.1.${i + 2}`;
      const other = `127.0.2.${i + 2}`;
      const held = [await open(crowded), await open(crowded)];
      assert.deepEqual(
        held.map((o) => admitted(o)),
        [true, true],
      );
      const refused = await open(crowded);
      assert.equal(refused.status, 429);
      assert.match(refused.retryAfter ?? '', /^[1-9]\d*$/);
      const elsewhere = await open(other);
      assert.ok(admitted(elsewhere), `another address: ${elsewhere.status}`);

      held[0]!.close();
      let again: Opened | undefined;
      await waitFor(
        async () => {
          // A long-poll connection ends when it is not polled: the other one is kept polled.
          await held[1]!.poll?.();
          again = await open(crowded);
          return admitted(again);
        },
        { timeoutMs: 20_000, intervalMs: 200, what: 'the place given back' },
      );
      assert.equal((await open(crowded)).status, 429, 'one place came back, not more');
      for (const o of [held[1]!, elsewhere, again!]) o.close();
    });
  }

  it('gives a killed connection its place back (a session kill)', async () => {
    const jwt = await f.jwt({ username: 'k', jti: 'capped-session' });
    const from = '127.0.3.2';
    const sse = (token?: string) =>
      get(`${f.url}/_gw/v1/connection/sse?subscriptions=${wanted}${token ? `&jwt=${token}` : ''}`, from);
    const first = await sse(jwt);
    const second = await sse();
    assert.deepEqual([first.status, second.status], [200, 200]);
    assert.equal((await sse()).status, 429);
    await f.blacklist('capped-session');
    await waitFor(() => first.text().includes('gw.session_killed'), { what: 'the kill' });
    let again: Opened | undefined;
    await waitFor(
      async () => {
        again = await sse();
        return again.status === 200;
      },
      { timeoutMs: 20_000, intervalMs: 200, what: 'the killed connection’s place given back' },
    );
    for (const o of [first, second, again!]) o.close();
  });
});

describe('connection cap of a replica', () => {
  let f: HubFixture;
  before(async () => {
    f = await startHubFixture({ MAX_CONNECTIONS: '3' });
  });
  after(() => f.stop());

  it('refuses the connection past MAX_CONNECTIONS with 503 and Retry-After, on every transport, until one ends', async () => {
    const sse = opener(f, 'sse');
    const held = [await sse('127.0.4.2'), await sse('127.0.4.3'), await sse('127.0.4.4')];
    assert.deepEqual(
      held.map((o) => o.status),
      [200, 200, 200],
    );
    for (const transport of transports()) {
      const refused = await opener(f, transport)('127.0.4.5');
      assert.equal(refused.status, 503, transport);
      assert.match(refused.retryAfter ?? '', /^[1-9]\d*$/, transport);
    }
    held[0]!.close();
    let again: Opened | undefined;
    await waitFor(
      async () => {
        again = await opener(f, 'ws')('127.0.4.5');
        return admitted(again);
      },
      { timeoutMs: 20_000, intervalMs: 200, what: 'the place given back' },
    );
    for (const o of [held[1]!, held[2]!, again!]) o.close();
  });
});

function transports(): Transport[] {
  return ['sse', 'ws', 'socketio-polling', 'socketio-websocket', 'longpolling'];
}

describe('connection caps across replicas', () => {
  it('counts a long-poll connection made on another replica at its first poll here, refused at the cap', async () => {
    const a = await startHubFixture({ MAX_CONNECTIONS_PER_ADDRESS: '1', REPLICA_ID: 'caps-a' });
    const b = await startHubFixture(
      { MAX_CONNECTIONS_PER_ADDRESS: '1', REPLICA_ID: 'caps-b' },
      {
        bus: a.bus,
        store: a.store,
      },
    );
    try {
      const from = '127.0.7.2';
      const created = await opener(a, 'longpolling')(from);
      assert.equal(created.status, 200);
      const onB = await opener(b, 'sse')(from);
      assert.equal(onB.status, 200, 'replica B held nothing from the address');
      // The connection made on A, polled on B: B's place for the address is taken.
      const poll = () => get(`${b.url}/_gw/v1/connection/longpolling?pollToken=${created.token}`, from);
      const refused = await poll();
      assert.equal(refused.status, 429);
      assert.match(refused.retryAfter ?? '', /^[1-9]\d*$/);
      onB.close();
      let polled: Opened | undefined;
      await waitFor(
        async () => {
          polled = await poll();
          return polled.status === 200;
        },
        { timeoutMs: 20_000, intervalMs: 200, what: 'the poll admitted once the SSE connection closed' },
      );
      await waitFor(() => polled!.text().includes('gw.connection.create'), { what: 'the poll answer' });
      assert.match(polled!.text(), /^\{"last_event_id"/, 'a poll of the connection made on A, not a new one');
    } finally {
      await b.stop();
      await a.stop();
    }
  });
});
