/**
 * API definitions written to hurt (real proxy processes sharing Redis): a `path_regex` that a
 * backtracking engine runs for hours, and targets that reach what the public edge must not expose
 * (loopback, where the internal API runs; link-local, where the cloud metadata service answers;
 * private ranges, where Redis and Kafka live), by address, by name, and by a name whose DNS answer
 * changes after it was first checked.
 *
 * Names resolve through test/fake-dns.ts, preloaded into the proxy processes: it replaces only
 * dns.lookup, so each request still goes through the proxy's own connector and lookup (undici for
 * requests, node:http for upgrades) to a real socket. No /etc/hosts edit, no traffic off loopback.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { dependencyAddress, uniqueName, waitFor } from '@gatehouse/testkit';
import { type ProxyProcess, runProxyExpectingExit, startProxy } from './proxy-process.ts';

const prefix = `${uniqueName('gw-proxy-hostile')}:`;
const fakeDns = fileURLToPath(new URL('./fake-dns.ts', import.meta.url));
const refusedBody = "Bad gateway: the target's address is not allowed.";
/** A backtracking engine takes about 2^40 steps for this pattern on `/` and 40 a's. */
const catastrophic = '/(a+)+x';
const forty = `/${'a'.repeat(40)}`;

/** An HTTP server that counts every TCP connection, answers requests and accepts WebSocket upgrades. */
interface CountingBackend {
  server: Server;
  port: number;
  connections: number;
}

async function startCountingBackend(host: string): Promise<CountingBackend> {
  const server = createServer((req, res) => {
    req.resume();
    // No keep-alive: every request through the proxy is a new connection, with a new lookup.
    res.writeHead(200, { 'content-type': 'text/plain', connection: 'close' }).end(`reached ${host}`);
  });
  const backend: CountingBackend = { server, port: 0, connections: 0 };
  server.on('connection', () => backend.connections++);
  server.on('upgrade', (_req: IncomingMessage, socket: Socket) => {
    socket.end('HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: websocket\r\n\r\n');
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  backend.port = (server.address() as AddressInfo).port;
  return backend;
}

function api(id: string, target: string, port: number, endpoints?: unknown[]) {
  return {
    id,
    name: id,
    version_data: {
      default: { endpoints: endpoints ?? [{ id: 'get', method: 'GET', path_regex: `/${id}(/.*)?` }] },
    },
    proxy: { target_url: target, port },
  };
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** The raw answer to a WebSocket upgrade request (status line and body). */
async function upgradeAnswer(publicUrl: string, path: string): Promise<string> {
  const { port } = new URL(publicUrl);
  const { connect } = await import('node:net');
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () =>
      socket.write(
        `GET ${path} HTTP/1.1\r\nhost: a\r\nconnection: Upgrade\r\nupgrade: websocket\r\n` +
          'sec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
      ),
    );
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString()));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
    socket.setTimeout(20_000, () => socket.destroy(new Error(`no answer to the upgrade:\n${text}`)));
  });
}

describe('hostile API definitions', () => {
  let local: CountingBackend;
  let second: CountingBackend;
  /** Default settings: public targets only. */
  let strict: ProxyProcess;
  /** PROXY_TARGET_ALLOW=* shares the store with strict: what it writes, strict must still refuse. */
  let trusting: ProxyProcess;
  const env = (extra: Record<string, string>) => ({
    REDIS_URL: dependencyAddress.redisUrl,
    STORE_KEY_PREFIX: prefix,
    NODE_OPTIONS: `--import ${fakeDns}`,
    ...extra,
  });

  before(async () => {
    [local, second] = await Promise.all([
      startCountingBackend('127.0.0.1'),
      startCountingBackend('127.0.0.2'),
    ]);
    const fakeDnsAnswers = JSON.stringify({
      'internal.test': ['127.0.0.1'],
      'allowed.test': ['127.0.0.1'],
      'flip.test': ['127.0.0.2', '127.0.0.1'],
      'flip-ws.test': ['127.0.0.2', '127.0.0.1'],
      'mixed.test': [['127.0.0.2', '127.0.0.1']],
    });
    [strict, trusting] = await Promise.all([
      startProxy(env({ FAKE_DNS: fakeDnsAnswers, PROXY_TARGET_ALLOW: '127.0.0.2/32, allowed.test' })),
      startProxy(env({ FAKE_DNS: fakeDnsAnswers, PROXY_TARGET_ALLOW: '*' })),
    ]);
  });
  after(async () => {
    await Promise.all([strict?.stop(), trusting?.stop()]);
    for (const b of [local, second]) {
      b?.server.closeAllConnections();
      b?.server.close();
    }
  });

  describe('path_regex (ReDoS)', () => {
    it(`matches ${catastrophic} against 40 a's promptly, on requests and on the preflights of event routes`, async () => {
      const created = await post(`${strict.apiUrl}/v3/apis`, {
        ...api('redos', '127.0.0.2', second.port, [
          { id: 'get', method: 'GET', path_regex: catastrophic },
          { id: 'publish', method: 'POST', path_regex: catastrophic, target: 'kafka', topic: 'redos' },
        ]),
      });
      assert.equal(created.status, 201, await created.text());
      // Generous: a backtracking engine would not answer for hours; a linear one within milliseconds.
      const signal = () => AbortSignal.timeout(20_000);
      assert.equal((await fetch(`${strict.publicUrl}${forty}`, { signal: signal() })).status, 404);
      // An unmatched OPTIONS tries every event route's regex, for a CORS preflight.
      const preflight = await fetch(`${strict.publicUrl}${forty}`, { method: 'OPTIONS', signal: signal() });
      assert.equal(preflight.status, 404);
      const matched = await fetch(`${strict.publicUrl}/${'a'.repeat(40)}x`, { signal: signal() });
      assert.equal(await matched.text(), 'reached 127.0.0.2');
    });

    it('refuses lookaround and backreferences on the API with a 400 saying why', async () => {
      const res = await post(
        `${strict.apiUrl}/v3/apis`,
        api('lookaround', '127.0.0.2', second.port, [
          { id: 'ahead', method: 'GET', path_regex: '/a(?=b)' },
          { id: 'behind', method: 'GET', path_regex: '(?<!/admin)/x' },
          { id: 'backref', method: 'GET', path_regex: '/(a+)\\1' },
        ]),
      );
      assert.equal(res.status, 400);
      const map = (await res.json()) as Record<string, Array<{ path_regex: string }>>;
      const reason = (key: string) => map[key]![0]!.path_regex;
      assert.match(
        reason('lookaround/ahead'),
        /^is not a valid regular expression: lookahead is not supported \(path_regex is matched in linear time, RE2 syntax\)/,
      );
      assert.match(reason('lookaround/behind'), /lookbehind is not supported/);
      assert.match(reason('lookaround/backref'), /backreferences is not supported/);
      assert.equal((await fetch(`${strict.apiUrl}/v3/apis/lookaround`)).status, 404);
    });

    it('stops at start on such a pattern in PROXY_CONFIG_FILE, naming it', async () => {
      const file = [api('file-ahead', '127.0.0.2', 1, [{ id: 'e', method: 'GET', path_regex: '/a(?!b)' }])];
      const { code, output } = await runProxyExpectingExit(
        env({ PROXY_CONFIG_FILE: JSON.stringify(file), STORE_KEY_PREFIX: `${prefix}file:` }),
      );
      assert.equal(code, 2);
      assert.match(
        output,
        /PROXY_CONFIG_FILE: file-ahead\/e: path_regex is not a valid regular expression: lookahead is not supported/,
      );
    });
  });

  describe('target_url (SSRF)', () => {
    it('refuses loopback, link-local, private and special addresses when a definition is written, saying why', async () => {
      const cases: Array<[string, RegExp]> = [
        ['127.0.0.1', /127\.0\.0\.1 is a loopback address/],
        ['http://0x7f.1', /127\.0\.0\.1 is a loopback address/],
        ['http://[::1]', /::1 is a loopback address/],
        ['http://[::ffff:127.0.0.1]', /is a loopback address/],
        ['localhost', /localhost is a loopback name/],
        [
          'http://169.254.169.254',
          /169\.254\.169\.254 is a link-local \(cloud metadata services live here\) address/,
        ],
        ['10.1.2.3', /10\.1\.2\.3 is a private address/],
        ['https://192.168.0.10', /192\.168\.0\.10 is a private address/],
        ['http://[fd00::5]', /fd00::5 is a private \(unique local\) address/],
        ['0.0.0.0', /0\.0\.0\.0 is an unspecified address/],
      ];
      for (const [target, reason] of cases) {
        const res = await post(`${strict.apiUrl}/v3/apis`, api('ssrf', target, 6379));
        assert.equal(res.status, 400, target);
        const map = (await res.json()) as { api: Array<{ target_url: string }> };
        assert.match(map.api[0]!.target_url, /^is not allowed: /, target);
        assert.match(map.api[0]!.target_url, reason, target);
        assert.match(map.api[0]!.target_url, /PROXY_TARGET_ALLOW lists what may be/);
      }
      assert.equal((await fetch(`${strict.apiUrl}/v3/apis/ssrf`)).status, 404, 'nothing was stored');
      const update = await post(`${strict.apiUrl}/v3/apis`, api('moving', 'allowed.test', local.port));
      assert.equal(update.status, 201);
      const moved = await fetch(`${strict.apiUrl}/v3/apis/moving`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ proxy: { target_url: '169.254.169.254', port: 80 } }),
      });
      assert.equal(moved.status, 400);
      assert.equal(await (await fetch(`${strict.publicUrl}/moving`)).text(), 'reached 127.0.0.1');
    });

    it('stops at start on such a target in PROXY_CONFIG_FILE, and on an invalid PROXY_TARGET_ALLOW', async () => {
      const file = [api('metadata', 'http://169.254.169.254', 80)];
      const bad = await runProxyExpectingExit(
        env({ PROXY_CONFIG_FILE: JSON.stringify(file), STORE_KEY_PREFIX: `${prefix}file:` }),
      );
      assert.equal(bad.code, 2);
      assert.match(
        bad.output,
        /PROXY_CONFIG_FILE: api: target_url is not allowed: 169\.254\.169\.254 is a link-local/,
      );
      const list = await runProxyExpectingExit(env({ PROXY_TARGET_ALLOW: '10.0.0.0/8,http://x/' }));
      assert.equal(list.code, 2);
      assert.match(list.output, /PROXY_TARGET_ALLOW.*"http:\/\/x\/" is not a CIDR, an address, a host name/);
    });

    it('refuses at connect time a name that resolves to loopback: 502, a log line and a metric', async () => {
      const created = await post(`${strict.apiUrl}/v3/apis`, api('internal', 'internal.test', local.port));
      assert.equal(created.status, 201, 'a name cannot be judged until it is resolved');
      const before = local.connections;
      const res = await fetch(`${strict.publicUrl}/internal`);
      assert.equal(res.status, 502);
      assert.equal(await res.text(), refusedBody);
      assert.equal(local.connections, before, 'nothing connected to the backend');
      // The log line reaches the test through the child's stdout a moment after the answer.
      await waitFor(() => /"msg":"target address refused"/.test(strict.output()), {
        what: 'the log line of the refusal',
      });
      assert.match(strict.output(), /target internal\.test refused: 127\.0\.0\.1 is a loopback address/);
      const metrics = await (await fetch(`${strict.apiUrl}/metrics`)).text();
      assert.match(
        metrics,
        /gw_proxy_requests_total\{method="GET",path_regex="\/internal\(\/\.\*\)\?",target="http",response_from="http",status="target_refused"[^}]*\} 1$/m,
      );
    });

    it('catches DNS rebinding: the address is checked on every connection, not once', async () => {
      assert.equal(
        (await post(`${strict.apiUrl}/v3/apis`, api('flip', 'flip.test', second.port))).status,
        201,
      );
      const first = await fetch(`${strict.publicUrl}/flip`);
      assert.equal(await first.text(), 'reached 127.0.0.2', 'first answer: an allowed address');
      // The backend closed the connection, so the next request connects (and resolves) again.
      const local127 = await startCountingBackendOnPort(second.port);
      try {
        const rebound = await fetch(`${strict.publicUrl}/flip`);
        assert.equal(rebound.status, 502);
        assert.equal(await rebound.text(), refusedBody);
        assert.equal(local127.connections, 0, 'nothing reached 127.0.0.1');
      } finally {
        local127.server.close();
      }
    });

    it('refuses a name when any of its addresses is refused', async () => {
      assert.equal(
        (await post(`${strict.apiUrl}/v3/apis`, api('mixed', 'mixed.test', second.port))).status,
        201,
      );
      const before = second.connections;
      assert.equal((await fetch(`${strict.publicUrl}/mixed`)).status, 502);
      assert.equal(second.connections, before, 'not even the allowed address was tried');
    });

    it('lets through a listed host name whatever it resolves to, and a listed CIDR', async () => {
      assert.equal(
        (await post(`${strict.apiUrl}/v3/apis`, api('allowed', 'allowed.test', local.port))).status,
        201,
      );
      assert.equal(await (await fetch(`${strict.publicUrl}/allowed`)).text(), 'reached 127.0.0.1');
      assert.equal(
        (await post(`${strict.apiUrl}/v3/apis`, api('cidr', 'http://127.0.0.2', second.port))).status,
        201,
      );
      assert.equal(await (await fetch(`${strict.publicUrl}/cidr`)).text(), 'reached 127.0.0.2');
    });

    it('refuses at connect time an address literal stored while another list allowed it (* allows all)', async () => {
      const created = await post(`${trusting.apiUrl}/v3/apis`, api('literal', '127.0.0.1', local.port));
      assert.equal(created.status, 201, 'PROXY_TARGET_ALLOW=* allows every target');
      assert.equal(await (await fetch(`${trusting.publicUrl}/literal`)).text(), 'reached 127.0.0.1');
      const before = local.connections;
      // strict hears of the definition through the store's change notification.
      const res = await waitFor(
        async () => {
          const r = await fetch(`${strict.publicUrl}/literal`);
          return r.status === 404 ? undefined : r;
        },
        { what: 'the definition on the strict replica' },
      );
      assert.equal(res.status, 502);
      assert.equal(await res.text(), refusedBody);
      assert.equal(local.connections, before);
    });

    it('covers WebSocket upgrades: a refused literal, and a name rebound to loopback, get 502', async () => {
      const literal = await upgradeAnswer(strict.publicUrl, '/literal/ws');
      assert.match(literal, /^HTTP\/1\.1 502 /);
      assert.ok(literal.endsWith(refusedBody), literal);
      assert.equal(
        (await post(`${strict.apiUrl}/v3/apis`, api('flip-ws', 'flip-ws.test', second.port))).status,
        201,
      );
      assert.match(await upgradeAnswer(strict.publicUrl, '/flip-ws/chat'), /^HTTP\/1\.1 101 /);
      const before = local.connections;
      const rebound = await upgradeAnswer(strict.publicUrl, '/flip-ws/chat');
      assert.match(rebound, /^HTTP\/1\.1 502 /);
      assert.ok(rebound.endsWith(refusedBody), rebound);
      assert.equal(local.connections, before);
      // As for requests, the log line comes through the child's stdout a moment after the answer.
      await waitFor(
        () => /target flip-ws\.test refused: 127\.0\.0\.1 is a loopback address/.test(strict.output()),
        {
          what: 'the log line of the refused upgrade',
        },
      );
    });
  });
});

/** A server on 127.0.0.1 at the port the rebound name is asked for, to prove nothing reached it. */
async function startCountingBackendOnPort(port: number): Promise<{ server: Server; connections: number }> {
  const server = createServer((_req, res) => res.end('reached 127.0.0.1'));
  const counted = { server, connections: 0 };
  server.on('connection', () => counted.connections++);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return counted;
}
