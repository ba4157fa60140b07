import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createLogger,
  createRegistry,
  Health,
  loadConfig,
  type RunningHost,
  startHost,
} from '@gatehouse/service-kit';
import { MemoryStore, StoreUnavailableError } from '@gatehouse/store';
import { waitFor } from '@gatehouse/testkit';
import { blacklistConfig, createBlacklistService } from '../src/index.ts';

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: Record<string, unknown> | undefined;
}

/** The blacklist service alone on a host, over the memory store (the embedded default). */
/** A memory store that can be "unreachable", failing every command as the Redis store then does. */
class FlakyStore extends MemoryStore {
  down = false;
  override get(key: string) {
    return this.down
      ? Promise.reject(new StoreUnavailableError('redis GET failed: unreachable'))
      : super.get(key);
  }
  override set(key: string, value: string, options?: Parameters<MemoryStore['set']>[2]) {
    return this.down
      ? Promise.reject(new StoreUnavailableError('redis SET failed: unreachable'))
      : super.set(key, value, options);
  }
  override ttl(key: string) {
    return this.down
      ? Promise.reject(new StoreUnavailableError('redis PTTL failed: unreachable'))
      : super.ttl(key);
  }
  override keys(prefix: string) {
    return this.down
      ? Promise.reject(new StoreUnavailableError('redis SCAN failed: unreachable'))
      : super.keys(prefix);
  }
}

async function startApi(env: Record<string, string> = {}) {
  const store = new FlakyStore();
  const logger = createLogger({ name: 'blacklist-test', level: 'silent' });
  const registry = createRegistry();
  const config = loadConfig(blacklistConfig, { BLACKLIST_MAX_VALIDITY: '86400', ...env });
  const host: RunningHost = await startHost({
    services: [createBlacklistService(config, { store, logger, registry })],
    logger,
    registry,
    health: new Health(),
    host: '127.0.0.1',
    apiPort: 0,
    closeables: [store],
  });
  const base = `http://127.0.0.1:${host.apiPort}`;
  async function call(method: string, path: string, body?: unknown): Promise<Answer> {
    const res = await fetch(base + path, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    let json: Record<string, unknown> | undefined;
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: res.status, headers: res.headers, text, json };
  }
  const metric = async (line: RegExp) => {
    const text = (await call('GET', '/metrics')).text;
    const hit = text.split('\n').find((l) => line.test(l));
    return hit === undefined ? undefined : Number(hit.split(' ').at(-1));
  };
  return { store, host, call, metric, stop: () => host.stop() };
}

describe('session blacklist API', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  before(async () => {
    api = await startApi();
  });
  after(() => api.stop());

  for (const version of ['v2', 'v3']) {
    it(`POST /${version} answers 201 Created with a Location and the entry`, async () => {
      const id = `created-${version}`;
      const r = await api.call('POST', `/${version}/session-blacklist`, {
        sessionId: id,
        validityInSeconds: 60,
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.headers.get('location'), `/${version}/session-blacklist/${id}`);
      assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(r.headers.get('deprecation'), null);
      assert.deepEqual(
        { ...r.json, expiresAt: undefined },
        {
          sessionId: id,
          isBlacklisted: true,
          validityInSeconds: 60,
          expiresAt: undefined,
        },
      );
      const expiresAt = Date.parse(String(r.json!['expiresAt']));
      assert.ok(Math.abs(expiresAt - (Date.now() + 60_000)) < 1000);
      assert.ok(await api.store.exists(`blacklist:${id}`));
    });

    it(`GET /${version}/<id> answers 200 with the entry, 404 when not blacklisted`, async () => {
      await api.call('POST', `/${version}/session-blacklist`, {
        sessionId: `q-${version}`,
        validityInSeconds: '90',
      });
      const hit = await api.call('GET', `/${version}/session-blacklist/q-${version}`);
      assert.equal(hit.status, 200);
      assert.equal(hit.json!['isBlacklisted'], true);
      assert.equal(hit.json!['validityInSeconds'], 90);
      const miss = await api.call('GET', `/${version}/session-blacklist/unknown-${version}`);
      assert.equal(miss.status, 404);
      assert.equal(miss.text, 'Not found.');
    });
  }

  it("answers 415 to a body that is not JSON (a web page's no-cors POST) and blacklists nothing", async () => {
    const base = `http://127.0.0.1:${api.host.apiPort}`;
    const body = JSON.stringify({ sessionId: 'from-a-web-page', validityInSeconds: 60 });
    for (const version of ['v1', 'v2', 'v3'])
      for (const type of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        undefined,
      ]) {
        const res = await fetch(`${base}/${version}/session-blacklist`, {
          method: 'POST',
          ...(type === undefined
            ? { body: new Uint8Array(Buffer.from(body)) }
            : { headers: { 'content-type': type }, body }),
        });
        assert.equal(res.status, 415, `${version} ${type}`);
        assert.deepEqual(await res.json(), {
          error: 'the body must be JSON (content-type: application/json)',
        });
      }
    assert.equal(await api.store.exists('blacklist:from-a-web-page'), false);
    const json = await fetch(`${base}/v3/session-blacklist`, {
      method: 'POST',
      headers: { 'content-type': 'Application/JSON; charset=utf-8' },
      body,
    });
    assert.equal(json.status, 201, await json.text());
  });

  it('serves session ids that need escaping in a path', async () => {
    const id = 'user/42 session?x';
    const r = await api.call('POST', '/v3/session-blacklist', { sessionId: id, validityInSeconds: 60 });
    assert.equal(r.headers.get('location'), `/v3/session-blacklist/${encodeURIComponent(id)}`);
    assert.equal((await api.call('GET', r.headers.get('location')!)).status, 200);
  });

  it('keeps /v1 with its 200 answers and old bodies, marked deprecated', async () => {
    const added = await api.call('POST', '/v1/session-blacklist', {
      sessionId: 'old',
      validityInSeconds: '60',
    });
    assert.equal(added.status, 200);
    assert.deepEqual(added.json, { sessionId: 'old', validityInSeconds: 60, isBlacklisted: true });
    assert.equal(added.headers.get('deprecation'), '@1576195200');
    assert.equal(added.headers.get('sunset'), 'Wed, 30 Jun 2027 00:00:00 GMT');
    assert.equal(added.headers.get('link'), '</v3/session-blacklist>; rel="successor-version"');
    assert.equal(added.headers.get('location'), null);

    const hit = await api.call('GET', '/v1/session-blacklist/old');
    assert.equal(hit.status, 200);
    assert.deepEqual(hit.json, { sessionId: 'old', isBlacklisted: true });
    assert.equal(hit.headers.get('link'), '</v3/session-blacklist/old>; rel="successor-version"');
    const miss = await api.call('GET', '/v1/session-blacklist/never');
    assert.equal(miss.status, 200);
    assert.deepEqual(miss.json, { sessionId: 'never', isBlacklisted: false });
    assert.equal(miss.headers.get('deprecation'), '@1576195200');

    const bad = await api.call('POST', '/v1/session-blacklist', { sessionId: 'old' });
    assert.equal(bad.status, 400);
    assert.equal(bad.text, 'Missing value for "validityInSeconds"');
    assert.equal(bad.headers.get('deprecation'), '@1576195200', 'errors are marked too');
  });

  it('announces the configured sunset date', async () => {
    const other = await startApi({ BLACKLIST_V1_SUNSET: '2030-01-15' });
    try {
      const r = await other.call('GET', '/v1/session-blacklist/x');
      assert.equal(r.headers.get('sunset'), 'Tue, 15 Jan 2030 00:00:00 GMT');
    } finally {
      await other.stop();
    }
  });

  it('answers invalid bodies with 400 and a message naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [
        '{"sessionId":',
        'Expected a JSON object body with "sessionId" and "validityInSeconds", got text that is not JSON',
      ],
      [{ validityInSeconds: 5 }, 'Missing value for "sessionId"'],
      [{ sessionId: 7, validityInSeconds: 5 }, 'Expected a non-empty string for "sessionId", got 7'],
      [{ sessionId: 'a', validityInSeconds: 'x' }, 'Expected a number for "validityInSeconds", got "x"'],
      [
        { sessionId: 'a', validityInSeconds: -1 },
        'Expected a positive number for "validityInSeconds", got -1',
      ],
      [
        { sessionId: 'a', validityInSeconds: 86401 },
        'Expected at most 86400 for "validityInSeconds", got 86401',
      ],
    ];
    for (const version of ['v2', 'v3']) {
      for (const [body, message] of cases) {
        const r = await api.call('POST', `/${version}/session-blacklist`, body);
        assert.equal(r.status, 400, JSON.stringify(body));
        assert.equal(r.text, message);
      }
    }
    assert.equal(await api.store.exists('blacklist:a'), false);
  });

  it('refuses a body over 16 KiB with 413', async () => {
    const r = await api.call('POST', '/v3/session-blacklist', { sessionId: 'big', pad: 'x'.repeat(17_000) });
    assert.equal(r.status, 413);
  });

  it('answers unknown versions with 404 and other methods with 405', async () => {
    for (const path of ['/v4/session-blacklist', '/v0/session-blacklist/abc', '/latest/session-blacklist']) {
      const r = await api.call('POST', path, { sessionId: 'abc', validityInSeconds: 5 });
      assert.equal(r.status, 404, path);
      assert.match(r.text, /^Unknown API version ".+": the session blacklist is served under \/v2 and \/v3/);
    }
    const del = await api.call('DELETE', '/v3/session-blacklist/abc');
    assert.equal(del.status, 405);
    assert.equal(del.headers.get('allow'), 'GET');
    assert.equal((await api.call('GET', '/v3/session-blacklist')).status, 405);
  });

  it('extends a blacklisting and never shortens it', async () => {
    await api.call('POST', '/v3/session-blacklist', { sessionId: 'twice', validityInSeconds: 100 });
    const shorter = await api.call('POST', '/v3/session-blacklist', {
      sessionId: 'twice',
      validityInSeconds: 10,
    });
    assert.equal(shorter.status, 201);
    assert.equal(shorter.json!['validityInSeconds'], 100);
    const longer = await api.call('POST', '/v2/session-blacklist', {
      sessionId: 'twice',
      validityInSeconds: 1000,
    });
    assert.equal(longer.json!['validityInSeconds'], 1000);
    assert.ok((await api.store.ttl('blacklist:twice'))! > 999);
  });

  it('counts additions by version and outcome, and entries as they come and go', async () => {
    const fresh = await startApi();
    try {
      assert.equal(await fresh.metric(/^gw_blacklist_entries /), 0);
      await fresh.call('POST', '/v3/session-blacklist', { sessionId: 'm1', validityInSeconds: 1 });
      await fresh.call('POST', '/v3/session-blacklist', { sessionId: 'm2', validityInSeconds: 60 });
      await fresh.call('POST', '/v2/session-blacklist', { sessionId: 'm2', validityInSeconds: 120 });
      await fresh.call('POST', '/v1/session-blacklist', { sessionId: 'm2', validityInSeconds: '5' });
      assert.equal(await fresh.metric(/^gw_blacklist_entries /), 2);
      assert.equal(await fresh.metric(/^gw_blacklist_additions_total\{version="v3",outcome="added"/), 2);
      assert.equal(await fresh.metric(/^gw_blacklist_additions_total\{version="v2",outcome="extended"/), 1);
      assert.equal(await fresh.metric(/^gw_blacklist_additions_total\{version="v1",outcome="kept"/), 1);
      // m1 expires after one second; the store announces it and the next scrape recounts.
      await waitFor(async () => (await fresh.metric(/^gw_blacklist_entries /)) === 1, { timeoutMs: 3000 });
    } finally {
      await fresh.stop();
    }
  });

  it('answers 503 with Retry-After while the store is unavailable', async () => {
    const down = await startApi();
    down.store.down = true;
    try {
      const add = await down.call('POST', '/v3/session-blacklist', { sessionId: 'x', validityInSeconds: 5 });
      assert.equal(add.status, 503);
      assert.equal(add.headers.get('retry-after'), '1');
      assert.equal(add.text, "The gateway's store is unavailable for the moment; retry later.");
      assert.equal((await down.call('GET', '/v2/session-blacklist/x')).status, 503);
      const metrics = await down.call('GET', '/metrics');
      assert.equal(metrics.status, 200, 'a failed count does not break /metrics');
    } finally {
      await down.stop();
    }
  });
});
