/**
 * Our own outage is answered 503 with Retry-After, by every service, on every request path that
 * needs the store or a bus: never 400 or 500. Every service runs as a process on the real Redis
 * (store and control bus) and Kafka (fan-out stream, proxy target). Redis is stopped: each path is
 * asked, /ready is false everywhere; Redis comes back: each path works again by itself, the same
 * connections and cookies included. Then Redis is paused (SIGSTOP), where commands time out
 * instead of failing at once: the answers are 503 as well. The matrix is printed.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { SignedTokenCodec, signJwt } from '@gatehouse/auth';
import {
  dependency,
  dependencyAddress,
  exitAfterFileWhenHung,
  LongPollClient,
  openSse,
  pauseDependency,
  type ServiceProcess,
  type SseConnection,
  spawnService,
  uniqueName,
  waitFor,
} from '@gatehouse/testkit';
import { io } from 'socket.io-client';
import WebSocket from 'ws';

after(() => exitAfterFileWhenHung());

const run = uniqueName('outage');
const jwtSecret = 'outage-answers-secret-long-enough-for-hs256';
const tokenSecret = `${run}-token-secret`;
const jwt = signJwt(
  { jti: `${run}-session`, username: 'u', exp: Math.floor(Date.now() / 1000) + 3600 },
  {
    alg: 'HS256',
    key: jwtSecret,
  },
);
const shared = {
  STORE: 'redis',
  STORE_KEY_PREFIX: `${run}:`,
  REDIS_URL: dependencyAddress.redisUrl,
  CONTROL_BUS: 'redis',
  FANOUT_BUS: 'kafka',
  FANOUT_TOPIC: `${run}-gw-events`,
  KAFKA_BROKERS: dependencyAddress.kafkaBrokers.join(','),
  JWT_SECRET_KEY: jwtSecret,
  TOKEN_SECRET: tokenSecret,
};

/** One answer: its status, and whether it carried Retry-After. */
interface Answer {
  status: number;
  retryAfter: string | null;
}

async function http(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(15_000) });
  await res.body?.cancel();
  return { status: res.status, retryAfter: res.headers.get('retry-after') };
}

/** A WebSocket connect: 101 then the close code of a refusal (4000 + status), or 101 when kept open. */
async function wsConnect(url: string): Promise<Answer> {
  const ws = new WebSocket(url);
  ws.on('error', () => {});
  const first = await Promise.race([
    once(ws, 'message').then(() => 101),
    once(ws, 'close').then(([code]) => code as number),
  ]);
  ws.terminate();
  return { status: first >= 4000 ? first - 4000 : first, retryAfter: null };
}

/** A socket.io connect: data.status of its connect_error, or 101 once connected. */
async function socketIoConnect(url: string): Promise<Answer> {
  const socket = io(url, {
    path: '/_gw/v1/socket.io/',
    auth: { jwt },
    transports: ['websocket'],
    reconnection: false,
  });
  const status = await new Promise<number>((resolve) => {
    socket.on('connect', () => resolve(101));
    socket.on('connect_error', (err: Error & { data?: { status?: number } }) =>
      resolve(err.data?.status ?? 0),
    );
  });
  socket.close();
  return { status, retryAfter: null };
}

describe('outage answers (every service as a process, real Redis and Kafka)', () => {
  let hub: ServiceProcess;
  let publisher: ServiceProcess;
  let proxy: ServiceProcess;
  let blacklist: ServiceProcess;
  let backend: Server;
  let sse: SseConnection;
  let sseToken: string;
  const lp = { client: undefined as LongPollClient | undefined };
  const matrix: string[] = [];

  /** Every request path that needs Redis, with what it should answer while Redis is up. */
  const paths = () => {
    const correlation = new SignedTokenCodec(tokenSecret, 'correlation').encode({
      replica: `${run}-another-proxy`,
      id: 'x',
      expiresAt: Date.now() + 60_000,
    });
    const bearer = { authorization: `Bearer ${jwt}` };
    return [
      [
        'push-hub',
        'SSE connect with a JWT',
        200,
        () => http(`${hub.publicUrl}/_gw/v1/connection/sse?jwt=${jwt}`),
      ],
      ['push-hub', 'SSE connect without a JWT', 200, () => http(`${hub.publicUrl}/_gw/v1/connection/sse`)],
      [
        'push-hub',
        'WebSocket connect',
        101,
        () => wsConnect(`${hub.publicUrl!.replace('http', 'ws')}/_gw/v1/connection/ws?jwt=${jwt}`),
      ],
      ['push-hub', 'socket.io connect', 101, () => socketIoConnect(hub.publicUrl!)],
      [
        'push-hub',
        'long-poll connect',
        200,
        () => http(`${hub.publicUrl}/_gw/v1/connection/longpolling?jwt=${jwt}`),
      ],
      [
        'push-hub',
        'long-poll poll',
        200,
        async () => {
          const r = await lp.client!.get();
          return { status: r.status, retryAfter: r.status === 503 ? '1' : null };
        },
      ],
      [
        'push-hub',
        'PUT subscriptions',
        204,
        () =>
          http(`${hub.publicUrl}/_gw/v1/connection/sse/${sseToken}/subscriptions`, {
            method: 'PUT',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ subscriptions: [{ eventType: 'other' }] }),
          }),
      ],
      [
        'publisher',
        'POST /_gw/v1/events (jwt_validation)',
        202,
        () =>
          http(`${publisher.publicUrl}/_gw/v1/events`, {
            method: 'POST',
            headers: { 'content-type': 'application/cloudevents+json', ...bearer },
            body: JSON.stringify({
              specversion: '1.0',
              id: uniqueName('e'),
              source: 'outage',
              type: 'greeting',
            }),
          }),
      ],
      [
        'proxy',
        'GET a secured endpoint',
        200,
        () => http(`${proxy.publicUrl}/secure/x`, { headers: bearer }),
      ],
      ['proxy', 'GET /v3/apis', 200, () => http(`${proxy.apiUrl}/v3/apis`)],
      [
        'proxy',
        'POST /v3/responses (another replica)',
        404,
        () =>
          http(`${proxy.apiUrl}/v3/responses`, {
            method: 'POST',
            headers: { 'gw-correlation': correlation },
            body: 'r',
          }),
      ],
      [
        'blacklist',
        'POST /v3/session-blacklist',
        201,
        () =>
          http(`${blacklist.apiUrl}/v3/session-blacklist`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ sessionId: uniqueName('s'), validityInSeconds: 60 }),
          }),
      ],
      [
        'blacklist',
        'GET /v3/session-blacklist/<id>',
        404,
        () => http(`${blacklist.apiUrl}/v3/session-blacklist/nobody`),
      ],
      ...[
        ['push-hub', () => hub],
        ['publisher', () => publisher],
        ['proxy', () => proxy],
        ['blacklist', () => blacklist],
      ].map(([name, service]) => [
        name,
        '/ready',
        200,
        () => http(`${(service as () => ServiceProcess)().apiUrl}/ready`),
      ]),
    ] as Array<[string, string, number, () => Promise<Answer>]>;
  };

  before(async () => {
    backend = createServer((_req, res) => res.end('backend'));
    backend.listen(0, '127.0.0.1');
    await once(backend, 'listening');
    const backendPort = (backend.address() as { port: number }).port;
    const apis = [
      {
        id: 'secure',
        name: 'secure',
        auth_type: 'jwt',
        version_data: {
          default: { endpoints: [{ id: 's', method: 'GET', path_regex: '/secure/.*', secured: true }] },
        },
        proxy: { target_url: '127.0.0.1', port: backendPort },
      },
    ];
    [hub, publisher, proxy, blacklist] = (await Promise.all([
      spawnService({
        entry: 'services/push-hub/src/main.ts',
        publicPort: true,
        env: { ...shared, REPLICA_ID: `${run}-hub`, LONGPOLL_TIMEOUT: '500ms' },
      }),
      spawnService({
        entry: 'services/publisher/src/main.ts',
        publicPort: true,
        env: { ...shared, SUBMISSION_CHECK: 'jwt_validation' },
        readyTimeoutMs: 60_000,
      }),
      spawnService({
        entry: 'services/proxy/src/main.ts',
        publicPort: true,
        env: {
          ...shared,
          PROXY_CONFIG_FILE: JSON.stringify(apis),
          PROXY_TARGET_ALLOW: '127.0.0.1',
          REPLICA_ID: `${run}-proxy`,
        },
      }),
      spawnService({ entry: 'services/blacklist/src/main.ts', env: shared }),
    ])) as [ServiceProcess, ServiceProcess, ServiceProcess, ServiceProcess];
    sse = await openSse(`${hub.publicUrl}/_gw/v1/connection/sse?jwt=${jwt}`);
    await waitFor(() => sse.events('gw.connection.create').length === 1, { what: 'the SSE welcome' });
    sseToken = (sse.events('gw.connection.create')[0]!['data'] as { connection_token: string })
      .connection_token;
    lp.client = new LongPollClient(hub.publicUrl!);
    await lp.client.get(`?jwt=${jwt}`);
  });
  after(async () => {
    console.log(
      `outage answers (service · path · Redis up / stopped / back / paused):\n${matrix.join('\n')}`,
    );
    sse?.close();
    await Promise.all([hub, publisher, proxy, blacklist].map((s) => s?.stop()));
    backend?.close();
  });

  /**
   * The hub takes its rate-limit places from Redis in blocks and hands them out itself, so for 1 s
   * after a connect it admits the next ones without Redis (services/push-hub/src/limits/leased-window.ts):
   * a connect that needs nothing else from Redis then gets its 200 through an outage. Past that its
   * unused places are back in the store, and a connect needs a round trip: the answer tested here.
   */
  const untilNoPlacesHeld = () => sleep(1500);

  it('answers 503 with Retry-After while Redis is stopped, and works again once it is back', async () => {
    const cases = paths();
    const up: Answer[] = [];
    for (const [, , , ask] of cases) up.push(await ask());
    await untilNoPlacesHeld();
    await dependency('down', 'redis');
    const down: Answer[] = [];
    try {
      for (const [service] of [['push-hub'], ['publisher'], ['proxy'], ['blacklist']] as const) {
        const s = { 'push-hub': hub, publisher, proxy, blacklist }[service];
        await waitFor(async () => (await http(`${s.apiUrl}/ready`)).status === 503, {
          what: `${service} not ready`,
        });
      }
      for (const [, , , ask] of cases) down.push(await ask());
    } finally {
      await dependency('up', 'redis');
    }
    const back: Answer[] = [];
    for (const [i, [service, path, expected, ask]] of cases.entries()) {
      const answer = await waitFor(
        async () => {
          const a = await ask();
          return a.status === expected ? a : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 250, what: `${service} ${path} working again` },
      ).catch(async () => ask());
      back.push(answer);
      matrix[i] =
        `${service} · ${path} · ${up[i]!.status} / ${down[i]!.status}${down[i]!.retryAfter ? ' (Retry-After)' : ''} / ${answer.status}`;
    }
    for (const [i, [service, path, expected]] of cases.entries()) {
      assert.equal(up[i]!.status, expected, `${service} ${path} before the outage`);
      assert.equal(down[i]!.status, 503, `${service} ${path} while Redis is stopped`);
      if (!['WebSocket connect', 'socket.io connect', '/ready'].includes(path))
        assert.equal(down[i]!.retryAfter, '1', `${service} ${path}: Retry-After`);
      assert.equal(back[i]!.status, expected, `${service} ${path} once Redis is back`);
    }
    assert.ok(
      !sse.events().some((e) => e['type'] === 'gw.session_killed'),
      'the SSE connection lived through it',
    );
  });

  it('answers 503 while Redis is paused (commands time out instead of failing)', async () => {
    const cases = paths();
    await untilNoPlacesHeld();
    pauseDependency('redis', true);
    let paused: Answer[];
    try {
      paused = await Promise.all(cases.map(([, , , ask]) => ask()));
    } finally {
      pauseDependency('redis', false);
    }
    for (const [i, [service, path]] of cases.entries()) {
      matrix[i] = `${matrix[i]} / ${paused[i]!.status}`;
      assert.equal(paused[i]!.status, 503, `${service} ${path} while Redis is paused`);
    }
  });
});
