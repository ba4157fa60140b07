import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ConfigError,
  type GatewayService,
  Health,
  InternalApiAuth,
  internalApiAuthConfig,
  loadConfig,
  type RunningHost,
  sendJson,
} from '../src/index.ts';
import { startTestHost } from './test-host.ts';

const token = 'an-internal-api-token-for-tests';

const service: GatewayService = {
  name: 'admin',
  internal: (req, res) => {
    if (req.url !== '/v3/things') return false;
    sendJson(res, 200, { things: [] });
    return true;
  },
};

async function host(auth: InternalApiAuth | undefined): Promise<RunningHost> {
  const health = new Health();
  health.addCheck('store', () => {
    throw new Error('redis at 10.1.2.3:6379 refused the connection');
  });
  return startTestHost({
    health,
    services: [service],
    internalApiAuth: auth,
  });
}

describe('internal API bearer token', () => {
  let locked: RunningHost;
  let metricsOpen: RunningHost;
  let open: RunningHost;
  const url = (h: RunningHost, path: string) => `http://127.0.0.1:${h.apiPort}${path}`;
  const bearer = (value: string) => ({ headers: { authorization: `Bearer ${value}` } });

  before(async () => {
    locked = await host(
      InternalApiAuth.from(loadConfig(internalApiAuthConfig, { INTERNAL_API_TOKEN: token })),
    );
    metricsOpen = await host(new InternalApiAuth(token, { openMetrics: true }));
    open = await host(InternalApiAuth.from(loadConfig(internalApiAuthConfig, {})));
  });
  after(async () => {
    await Promise.all([locked?.stop(), metricsOpen?.stop(), open?.stop()]);
  });

  it('refuses internal endpoints, metrics and the API document without the right token', async () => {
    for (const path of ['/v3/things', '/metrics', '/swagger.json', '/nowhere']) {
      for (const init of [
        {},
        bearer('wrong-token-of-some-length'),
        bearer(`${token}x`),
        bearer(token.slice(1)),
      ]) {
        const res = await fetch(url(locked, path), init);
        assert.equal(res.status, 401, `${path} ${JSON.stringify(init)}`);
        assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="gatehouse-internal"');
        assert.match(await res.text(), /Authorization: Bearer <INTERNAL_API_TOKEN>/);
      }
      const basic = await fetch(url(locked, path), { headers: { authorization: `Basic ${token}` } });
      assert.equal(basic.status, 401);
    }
  });

  it('serves them with the token', async () => {
    const res = await fetch(url(locked, '/v3/things'), bearer(token));
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { things: [] });
    assert.equal((await fetch(url(locked, '/metrics'), bearer(token))).status, 200);
    assert.equal((await fetch(url(locked, '/swagger.json'), bearer(token))).status, 200);
    const lower = await fetch(url(locked, '/v3/things'), { headers: { authorization: `bearer ${token}` } });
    assert.equal(lower.status, 200);
  });

  it('keeps the probes open, and /ready says only whether it is ready to a caller without the token', async () => {
    assert.equal(await (await fetch(url(locked, '/health'))).text(), 'OK');
    const anonymous = await fetch(url(locked, '/ready'));
    assert.equal(anonymous.status, 503);
    assert.deepEqual(await anonymous.json(), { ready: false });
    const detailed = await fetch(url(locked, '/ready'), bearer(token));
    assert.equal(detailed.status, 503);
    assert.match(JSON.stringify(await detailed.json()), /10\.1\.2\.3:6379/);
  });

  it('serves /metrics without the token when INTERNAL_API_METRICS_OPEN says so, and nothing else', async () => {
    assert.equal((await fetch(url(metricsOpen, '/metrics'))).status, 200);
    // Open means handed to the services: this host has no dashboard, so it is not found.
    assert.equal((await fetch(url(metricsOpen, '/dashboard/stream'))).status, 404);
    assert.equal((await fetch(url(locked, '/dashboard/stream'))).status, 401);
    assert.equal((await fetch(url(metricsOpen, '/v3/things'))).status, 401);
  });

  it("leaves the console's files open (they hold no data), not its data", async () => {
    // Handed to the services, which have no console here: not found rather than 401.
    for (const path of ['/dashboard', '/dashboard/console.js', '/dashboard/assets/vega.min.js'])
      assert.equal((await fetch(url(locked, path))).status, 404, path);
    assert.equal((await fetch(url(locked, '/dashboard/assets/other.js'))).status, 401);
    assert.equal((await fetch(url(locked, '/v3/console/test-event'), { method: 'POST' })).status, 401);
  });

  it('is open without INTERNAL_API_TOKEN', async () => {
    assert.equal((await fetch(url(open, '/v3/things'))).status, 200);
    assert.match(JSON.stringify(await (await fetch(url(open, '/ready'))).json()), /10\.1\.2\.3/);
  });

  it('refuses a short token or one with white space at start', () => {
    for (const bad of ['short', 'a token with spaces in it']) {
      assert.throws(
        () => loadConfig(internalApiAuthConfig, { INTERNAL_API_TOKEN: bad }),
        (err: unknown) => err instanceof ConfigError && /INTERNAL_API_TOKEN: must/.test(err.message),
      );
    }
  });
});
