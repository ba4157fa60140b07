import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { signJwt, withExpiry } from '@gatehouse/auth';
import { freePorts, openSse, waitFor } from '@gatehouse/testkit';
import {
  type EmbeddedGateway,
  ephemeralGatewaySettings,
  exampleAppSettings,
  startEmbeddedGateway,
} from '../src/index.ts';

const jwtKey = 'embedded-test-secret-of-sufficient-length';

describe('embedded gateway', () => {
  let gw: EmbeddedGateway;
  let edge: string;
  let apiUrl: string;
  before(async () => {
    gw = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      ...exampleAppSettings,
      JWT_SECRET_KEY: jwtKey,
    });
    edge = `http://127.0.0.1:${gw.publicPort}`;
    apiUrl = `http://127.0.0.1:${gw.apiPort}`;
  });
  after(() => gw.stop());

  it('answers the edge health check', async () => {
    const res = await fetch(`${edge}/_gw/health`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'OK');
  });

  it('answers the internal health, readiness and metrics endpoints', async () => {
    assert.equal(await (await fetch(`${apiUrl}/health`)).text(), 'OK');
    const ready = await fetch(`${apiUrl}/ready`);
    assert.equal(ready.status, 200);
    const report = (await ready.json()) as { ready: boolean; checks: Record<string, string> };
    assert.equal(report.ready, true);
    assert.equal(report.checks['store'], 'ok');
    assert.equal(report.checks['fanout-bus'], 'ok');
    const metrics = await fetch(`${apiUrl}/metrics`);
    assert.match(metrics.headers.get('content-type') ?? '', /text\/plain/);
    assert.match(await metrics.text(), /^gw_process_cpu_user_seconds_total/m);
  });

  it('answers 404 for an unknown path and 431 for an oversized header value', async () => {
    assert.equal((await fetch(`${edge}/nowhere`)).status, 404);
    const big = await fetch(`${edge}/_gw/health`, { headers: { 'x-big': 'a'.repeat(16385) } });
    assert.equal(big.status, 431);
    const fits = await fetch(`${edge}/_gw/health`, { headers: { 'x-big': 'a'.repeat(16384) } });
    assert.equal(fits.status, 200);
  });

  it('delivers an event posted to the edge to an SSE subscriber, all in one process', async () => {
    const sse = await openSse(
      `${edge}/_gw/v1/connection/sse?subscriptions=${encodeURIComponent('[{"eventType":"hello"}]')}`,
    );
    await waitFor(() => sse.frames.length >= 2);
    const res = await fetch(`${edge}/_gw/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ specversion: '1.0', id: '1', type: 'hello', source: 'test', data: { a: 1 } }),
    });
    assert.equal(res.status, 202);
    await waitFor(() => sse.events('hello').length === 1);
    sse.close();
  });

  it('proxies to an API defined at runtime on the internal API', async () => {
    const backend = createServer((req, res) => res.end(`backend saw ${req.url}`)).listen(0, '127.0.0.1');
    await once(backend, 'listening');
    const port = (backend.address() as AddressInfo).port;
    const api = {
      id: 'demo',
      name: 'demo',
      version_data: { default: { endpoints: [{ id: 'get-demo', method: 'GET', path_regex: '/demo/(.+)' }] } },
      proxy: { use_env: false, target_url: 'http://127.0.0.1', port },
    };
    const created = await fetch(`${apiUrl}/v3/apis`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(api),
    });
    assert.equal(created.status, 201, await created.text());
    const res = await fetch(`${edge}/demo/things?x=1`);
    assert.equal(await res.text(), 'backend saw /demo/things?x=1');
    backend.close();
  });

  it('kills an SSE connection when its session is blacklisted on the internal API', async () => {
    const jwt = signJwt(withExpiry({ sid: 'embedded-session', jti: 'embedded-session' }), {
      alg: 'HS256',
      key: jwtKey,
    });
    const sse = await openSse(`${edge}/_gw/v1/connection/sse?jwt=${jwt}`);
    assert.equal(sse.status, 200, sse.errorBody);
    await waitFor(() => sse.frames.length >= 2);
    const res = await fetch(`${apiUrl}/v3/session-blacklist`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sessionId: 'embedded-session', validityInSeconds: 60 }),
    });
    assert.equal(res.status, 201);
    await sse.ended;
    assert.equal(sse.frames.at(-1)!.event, 'gw.session_killed');
  });

  it('refuses a JWT without exp (JWT_REQUIRE_EXP), with the one refusal text', async () => {
    const lasting = signJwt({ jti: 'no-exp', username: 'x' }, { alg: 'HS256', key: jwtKey });
    const sse = await openSse(`${edge}/_gw/v1/connection/sse?jwt=${lasting}`);
    sse.close();
    assert.equal(sse.status, 400);
    assert.equal(sse.errorBody, 'invalid JWT');
    const backend = createServer((_req, res) => res.end('secret')).listen(0, '127.0.0.1');
    await once(backend, 'listening');
    try {
      const api = {
        id: 'no-exp',
        name: 'no-exp',
        auth_type: 'jwt',
        version_data: {
          default: { endpoints: [{ id: 's', method: 'GET', path_regex: '/no-exp', secured: true }] },
        },
        proxy: {
          use_env: false,
          target_url: 'http://127.0.0.1',
          port: (backend.address() as AddressInfo).port,
        },
      };
      const created = await fetch(`${apiUrl}/v3/apis`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(api),
      });
      assert.equal(created.status, 201, await created.text());
      const refused = await fetch(`${edge}/no-exp`, { headers: { authorization: `Bearer ${lasting}` } });
      assert.equal(refused.status, 401);
      const lasts = signJwt(withExpiry({ jti: 'with-exp' }), { alg: 'HS256', key: jwtKey });
      const served = await fetch(`${edge}/no-exp`, { headers: { authorization: `Bearer ${lasts}` } });
      assert.equal(await served.text(), 'secret');
    } finally {
      backend.close();
    }
  });

  it('serves the example REST app on the REST engine port', async () => {
    const res = await fetch(`http://127.0.0.1:${gw.restPort}/api/hello/world`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /json/);
  });

  it('holds every service to MAX_JSON_DEPTH: events, subscriptions, API definitions, REST bodies', async () => {
    const deep = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      ...exampleAppSettings,
      MAX_JSON_DEPTH: '16',
    });
    try {
      const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
      const limit = /MAX_JSON_DEPTH \(16\)/;
      const post = (url: string, body: string) =>
        fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const event = await post(
        `http://127.0.0.1:${deep.publicPort}/_gw/v1/events`,
        `{"specversion":"1.0","id":"1","type":"t","source":"s","data":${nested(16)}}`,
      );
      assert.equal(event.status, 400);
      assert.match(await event.text(), limit);
      const sse = await openSse(
        `http://127.0.0.1:${deep.publicPort}/_gw/v1/connection/sse?subscriptions=${encodeURIComponent(`[{"eventType":"t","oneOf":[{"x":${nested(13)}}]}]`)}`,
      );
      assert.equal(sse.status, 400);
      assert.match(sse.errorBody ?? '', limit);
      const api = await post(`http://127.0.0.1:${deep.apiPort}/v3/apis`, `{"id":"x","extra":${nested(16)}}`);
      assert.equal(api.status, 400);
      assert.match(await api.text(), limit);
      const rest = await post(`http://127.0.0.1:${deep.restPort}/api/echo/1`, nested(17));
      assert.equal(rest.status, 400);
      assert.match(await rest.text(), limit);
    } finally {
      await deep.stop();
    }
  });

  it('asks for INTERNAL_API_TOKEN on the internal API when it is set, the probes aside', async () => {
    const token = 'embedded-internal-api-token';
    const locked = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      INTERNAL_API_TOKEN: token,
    });
    try {
      const api = `http://127.0.0.1:${locked.apiPort}`;
      assert.equal((await fetch(`${api}/v3/apis`)).status, 401);
      assert.equal((await fetch(`${api}/metrics`)).status, 401);
      const listed = await fetch(`${api}/v3/apis`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(listed.status, 200);
      assert.equal((await fetch(`${api}/health`)).status, 200);
      assert.equal((await fetch(`${api}/ready`)).status, 200);
    } finally {
      await locked.stop();
    }
  });

  it('stops with an error naming the variable when the configuration is invalid', async () => {
    await assert.rejects(
      startEmbeddedGateway({ API_PORT: 'forty', LOG_LEVEL: 'silent' }),
      /API_PORT: must be an integer/,
    );
  });

  it('bounds its in-process bus by MEMORY_BUS_MAX_BYTES, 1 MiB at least', async () => {
    await assert.rejects(
      startEmbeddedGateway({ MEMORY_BUS_MAX_BYTES: '1000', LOG_LEVEL: 'silent' }),
      /MEMORY_BUS_MAX_BYTES/,
    );
  });

  it('exits cleanly on SIGTERM as a process', async () => {
    const { code, out } = await runUntilHealthy({ TOKEN_SECRET: '' });
    assert.equal(code, 0);
    assert.match(out, /"msg":"stopped"/);
    assert.match(out, /TOKEN_SECRET is not set: generated a random one for this process/);
    const open = out.split('\n').find((line) => line.includes('this gateway is open'));
    assert.ok(open, `a warning that the gateway is open:\n${out}`);
    assert.equal(JSON.parse(open).level, 40);
    for (const door of [
      /anyone may push events to every browser \(SUBMISSION_CHECK=no_check\)/,
      /anyone may subscribe to every event type \(SUBSCRIPTION_CHECK=no_check\)/,
      /anyone who reaches the internal API .* \(no INTERNAL_API_TOKEN\)/,
      /docs\/security\.md/,
    ])
      assert.match(open, door);
  });

  it('logs nothing below LOG_LEVEL', async () => {
    // Its start warns (level 40) of the open gateway, and logs `listening` and `stopped` at info (30).
    const { code, out } = await runUntilHealthy({ TOKEN_SECRET: '', LOG_LEVEL: 'warn' });
    assert.equal(code, 0);
    const levels = out
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => (JSON.parse(line) as { level: number }).level);
    assert.ok(levels.includes(40), out);
    assert.deepEqual(
      levels.filter((level) => level < 40),
      [],
      `lines below warn:\n${out}`,
    );
    assert.doesNotMatch(out, /"msg":"stopped"/);
    const info = await runUntilHealthy({ TOKEN_SECRET: '', LOG_LEVEL: 'info' });
    assert.match(info.out, /"msg":"stopped"/, 'the same run at info logs its stop');
  });

  it('says nothing of an open gateway once the checks and the internal API token are set', async () => {
    const { out } = await runUntilHealthy({
      SUBMISSION_CHECK: 'jwt_validation',
      SUBSCRIPTION_CHECK: 'jwt_validation',
      INTERNAL_API_TOKEN: 'embedded-test-internal-api-token',
    });
    assert.doesNotMatch(out, /this gateway is open/);
  });
});

/**
 * `make run`'s main.ts as a process on free ports, stopped with SIGTERM once its /health answers
 * (not once it logs that it listens: at a high LOG_LEVEL it says nothing of it): its exit code and
 * stdout.
 */
async function runUntilHealthy(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const [inbound, api, rest] = await freePorts(3);
  const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
  const child = spawn(process.execPath, [main], {
    env: {
      ...process.env,
      INBOUND_PORT: String(inbound),
      API_PORT: String(api),
      REST_SERVER_PORT: String(rest),
      HOST: '127.0.0.1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  try {
    // A bound against a hang: a start takes 10 s and more on a busy box (two cores).
    await waitFor(async () => (await fetch(`http://127.0.0.1:${api}/health`).catch(() => undefined))?.ok, {
      what: 'the gateway to answer /health',
      timeoutMs: 60_000,
      intervalMs: 100,
    });
  } finally {
    child.kill('SIGTERM');
  }
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, out };
}
