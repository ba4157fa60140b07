/**
 * API definitions across two proxy replicas (separate processes) sharing real Redis: start-up
 * validation, the /v2|v3/apis CRUD, changes seen by the other replica at once, persistence
 * across restarts, and the PROXY_CONFIG_FILE seeding rule.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dependencyAddress, uniqueName, waitFor } from '@gatehouse/testkit';
import { type ProxyProcess, runProxyExpectingExit, startProxy } from './proxy-process.ts';
import { startBackend, type TestBackend } from './test-backend.ts';

const prefix = `${uniqueName('gw-proxy-defs')}:`;
let backend: TestBackend;
let a: ProxyProcess;
let b: ProxyProcess;

const seededApi = () => ({
  id: 'seeded',
  name: 'seeded',
  version_data: { default: { endpoints: [{ id: 'get', method: 'GET', path_regex: '/seeded' }] } },
  proxy: { target_url: '127.0.0.1', port: backend.port },
});
const runtimeApi = (path = '/runtime/(.+)') => ({
  id: 'runtime',
  name: 'runtime',
  version_data: { default: { endpoints: [{ id: 'get', method: 'GET', path_regex: path }] } },
  proxy: { target_url: '127.0.0.1', port: backend.port },
});
const env = (extra: Record<string, string> = {}) => ({
  REDIS_URL: dependencyAddress.redisUrl,
  STORE_KEY_PREFIX: prefix,
  // No full re-read while the file runs: a change the other replica serves came by its change
  // notification, so the few seconds a loaded machine is given below never let a re-read pass.
  PROXY_SYNC_INTERVAL: '10m',
  ...extra,
});
/** Far below PROXY_SYNC_INTERVAL, far above a notification's time. */
const seenWithin = { timeoutMs: 5000, intervalMs: 10 };
const json = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

describe('proxy API definitions (two replicas, Redis)', () => {
  before(async () => {
    backend = await startBackend();
    [a, b] = await Promise.all([
      startProxy(env({ PROXY_CONFIG_FILE: JSON.stringify([seededApi()]) })),
      startProxy(env()),
    ]);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await backend?.close();
  });

  it('stops at start with a non-zero exit naming every error of PROXY_CONFIG_FILE', async () => {
    const config = [
      { id: 'one', version_data: { default: { endpoints: [{ id: 'e', method: 'BREW', path: '/x/{id}' }] } } },
      {
        id: 'two',
        name: 'two',
        version_data: {
          default: { endpoints: [{ id: 'k', method: 'POST', path_regex: '/k', target: 'kafka' }] },
        },
      },
    ];
    const { code, output } = await runProxyExpectingExit(env({ PROXY_CONFIG_FILE: JSON.stringify(config) }));
    assert.equal(code, 2);
    for (const expected of [
      'api: name must be string',
      'api: proxy must be present',
      'one/e: path was removed; use path_regex instead, e.g. "path_regex": "/x/(.+)"',
      'one/e: path_regex must be string',
      'one/e: method must be one of',
      'two/k: topic must be present',
    ])
      assert.ok(output.includes(`PROXY_CONFIG_FILE: ${expected}`), `missing "${expected}" in:\n${output}`);
    const missing = await runProxyExpectingExit(env({ PROXY_CONFIG_FILE: '/no/such/file.json' }));
    assert.equal(missing.code, 2);
    assert.match(missing.output, /PROXY_CONFIG_FILE: no file \/no\/such\/file\.json/);
  });

  it('stops at start when PROXY_CONFIG_FILE nests deeper than MAX_JSON_DEPTH, naming it', async () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const text = JSON.stringify([{ ...seededApi(), extra: '$' }]).replace('"$"', deep);
    const { code, output } = await runProxyExpectingExit(env({ PROXY_CONFIG_FILE: text }));
    assert.equal(code, 2, output);
    assert.match(
      output,
      /PROXY_CONFIG_FILE: the API definition list nests objects and arrays deeper than MAX_JSON_DEPTH \(128\) levels/,
    );
  });

  it('serves the file-seeded API on both replicas', async () => {
    for (const replica of [a, b]) {
      const res = await fetch(`${replica.publicUrl}/seeded`);
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { url: string }).url, '/seeded');
    }
  });

  it('creates on one replica, and the other serves it at once', async () => {
    const created = await fetch(`${a.apiUrl}/v3/apis`, json(runtimeApi()));
    assert.equal(created.status, 201);
    assert.deepEqual(await created.json(), { message: 'ok' });
    const local = await fetch(`${a.publicUrl}/runtime/1`);
    assert.equal(local.status, 200, 'the writing replica serves the change as soon as it answers');
    await waitFor(async () => (await fetch(`${b.publicUrl}/runtime/1`)).status === 200, {
      ...seenWithin,
      what: 'replica B to serve the new API',
    });
    const again = await fetch(`${b.apiUrl}/v2/apis`, json(runtimeApi()));
    assert.equal(again.status, 409);
    assert.deepEqual(await again.json(), { message: 'API with id=runtime already exists.' });
  });

  it('lists and gets with metadata on either replica, v2 and v3', async () => {
    const list = (await (await fetch(`${b.apiUrl}/v2/apis`)).json()) as Array<{
      id: string;
      active: boolean;
    }>;
    assert.deepEqual(
      list.map((x) => x.id),
      ['runtime', 'seeded'],
    );
    const one = (await (await fetch(`${b.apiUrl}/v3/apis/runtime`)).json()) as Record<string, unknown>;
    assert.equal(one.active, true);
    assert.equal(one.ref_number, 0);
    assert.equal(typeof one.timestamp, 'string');
    const missing = await fetch(`${a.apiUrl}/v3/apis/nope`);
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { message: "API with id=nope doesn't exist." });
    // The internal API's /v1 is gone (the specification removes it): nothing answers there.
    for (const [method, path] of [
      ['GET', '/v1/apis'],
      ['GET', '/v1/apis/runtime'],
      ['POST', '/v1/apis'],
      ['DELETE', '/v1/apis/runtime'],
    ] as const) {
      const gone = await fetch(`${a.apiUrl}${path}`, {
        method,
        ...(method === 'POST' && json(runtimeApi())),
      });
      assert.equal(gone.status, 404, `${method} ${path}`);
    }
    assert.equal(
      (await fetch(`${a.apiUrl}/v3/apis/runtime`)).status,
      200,
      'the DELETE on /v1 removed nothing',
    );
  });

  it('answers an invalid update with 400 and the error map, and changes nothing', async () => {
    const before = await (await fetch(`${a.apiUrl}/v3/apis/runtime`)).text();
    const res = await fetch(`${a.apiUrl}/v3/apis/runtime`, {
      ...json({ version_data: { default: { endpoints: [{ id: 'get', method: 'GET', path_regex: '/(' }] } } }),
      method: 'PUT',
    });
    assert.equal(res.status, 400);
    const errors = (await res.json()) as Record<string, Array<Record<string, string>>>;
    assert.match(errors['runtime/get']![0]!.path_regex!, /not a valid regular expression/);
    assert.equal(await (await fetch(`${b.apiUrl}/v3/apis/runtime`)).text(), before);
    assert.equal((await fetch(`${b.publicUrl}/runtime/1`)).status, 200);
    const badCreate = await fetch(
      `${a.apiUrl}/v3/apis`,
      json({
        id: 'x',
        name: 'x',
        version_data: {
          default: { endpoints: [{ id: 'e', method: 'GET', path_regex: '/x', secured: true }] },
        },
        proxy: { target_url: 'h', port: 1 },
      }),
    );
    assert.equal(badCreate.status, 400);
    assert.deepEqual(await badCreate.json(), { 'x/e': [{ auth_type: 'must be one of ["jwt"]' }] });
    assert.equal((await fetch(`${a.apiUrl}/v3/apis/x`)).status, 404);
    const notJson = await fetch(`${a.apiUrl}/v3/apis`, { method: 'POST', body: 'id=1' });
    assert.equal(notJson.status, 415);
  });

  it('answers an API definition nested deeper than MAX_JSON_DEPTH with 400 naming it, and stores nothing', async () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const api = JSON.stringify({ ...runtimeApi('/deep'), id: 'deep', name: 'deep', extra: '$' }).replace(
      '"$"',
      deep,
    );
    const headers = { 'content-type': 'application/json' };
    for (const [method, url] of [
      ['POST', `${a.apiUrl}/v3/apis`],
      ['PUT', `${a.apiUrl}/v3/apis/seeded`],
      ['POST', `${a.apiUrl}/v2/apis`],
    ] as const) {
      const body = method === 'PUT' ? `{"extra":${deep}}` : api;
      const res = await fetch(url, { method, headers, body });
      assert.equal(res.status, 400, `${method} ${url}`);
      assert.match(
        await res.text(),
        /the API definition nests objects and arrays deeper than MAX_JSON_DEPTH \(128\) levels/,
      );
    }
    assert.equal((await fetch(`${a.apiUrl}/v3/apis/deep`)).status, 404);
    const seeded = (await (await fetch(`${a.apiUrl}/v3/apis/seeded`)).json()) as Record<string, unknown>;
    assert.equal(seeded['extra'], undefined);
  });

  it('updates (shallow merge) and deletes through one replica, seen by the other', async () => {
    const updated = await fetch(`${b.apiUrl}/v3/apis/runtime`, {
      ...json({
        version_data: { default: { endpoints: [{ id: 'get', method: 'GET', path_regex: '/moved/(.+)' }] } },
      }),
      method: 'PUT',
    });
    assert.equal(updated.status, 200);
    await waitFor(async () => (await fetch(`${a.publicUrl}/moved/1`)).status === 200, {
      ...seenWithin,
      what: 'replica A to serve the update',
    });
    assert.equal((await fetch(`${a.publicUrl}/runtime/1`)).status, 404);
    const stored = (await (await fetch(`${a.apiUrl}/v3/apis/runtime`)).json()) as Record<string, unknown>;
    assert.equal(stored.ref_number, 1);
    assert.equal(stored.name, 'runtime', 'fields left out of the PUT are kept');
    const mismatch = await fetch(`${b.apiUrl}/v3/apis/runtime`, { ...json({ id: 'other' }), method: 'PUT' });
    assert.equal(mismatch.status, 400);
    // An unknown id has nothing to merge with: the body must be a whole definition (RIG's answer).
    for (const body of [{}, { name: 'g' }]) {
      const partial = await fetch(`${b.apiUrl}/v3/apis/ghost`, { ...json(body), method: 'PUT' });
      assert.equal(partial.status, 400, JSON.stringify(body));
      const problems = ((await partial.json()) as { api: Array<Record<string, string>> }).api;
      assert.ok(
        problems.some((p) => p['version_data'] === 'must be present'),
        JSON.stringify(problems),
      );
    }
    const whole = { ...runtimeApi(), id: 'ghost', name: 'ghost' };
    assert.equal((await fetch(`${b.apiUrl}/v3/apis/ghost`, { ...json(whole), method: 'PUT' })).status, 404);
    // The body is validated before the id is looked up: an invalid one is 400 even for an unknown id.
    const invalidGhost = await fetch(`${b.apiUrl}/v2/apis/ghost`, {
      ...json({
        name: 1,
        version_data: { default: { endpoints: [{ id: 'e', method: 'BREW', path_regex: '/(' }] } },
      }),
      method: 'PUT',
    });
    assert.equal(invalidGhost.status, 400);
    const map = (await invalidGhost.json()) as Record<string, Array<Record<string, string>>>;
    assert.deepEqual(map['api'], [{ name: 'must be string' }, { name: 'must have a length of at least 1' }]);
    const [regex, method] = map['ghost/e']!;
    assert.match(regex!.path_regex!, /^is not a valid regular expression/);
    assert.match(method!.method!, /^must be one of/);

    const deleted = await fetch(`${b.apiUrl}/v2/apis/runtime`, { method: 'DELETE' });
    assert.equal(deleted.status, 204);
    assert.equal(await deleted.text(), '');
    await waitFor(async () => (await fetch(`${a.publicUrl}/moved/1`)).status === 404, {
      ...seenWithin,
      what: 'replica A to drop the deleted API',
    });
    assert.equal((await fetch(`${a.apiUrl}/v2/apis/runtime`, { method: 'DELETE' })).status, 404);
  });

  it('keeps runtime changes across restarts; the file wins only when it changes', async () => {
    assert.equal((await fetch(`${a.apiUrl}/v3/apis`, json(runtimeApi('/kept')))).status, 201);
    assert.equal((await fetch(`${a.apiUrl}/v3/apis/seeded`, { method: 'DELETE' })).status, 204);
    await Promise.all([a.stop(), b.stop()]);
    a = await startProxy(env({ PROXY_CONFIG_FILE: JSON.stringify([seededApi()]) }));
    assert.equal((await fetch(`${a.publicUrl}/kept`)).status, 200, 'runtime API survived the restart');
    assert.equal(
      (await fetch(`${a.publicUrl}/seeded`)).status,
      404,
      'the unchanged file does not undo a delete',
    );
    await a.stop();
    const changedFile = { ...seededApi(), name: 'seeded v2' };
    a = await startProxy(env({ PROXY_CONFIG_FILE: JSON.stringify([changedFile]) }));
    b = await startProxy(env());
    assert.equal((await fetch(`${b.publicUrl}/seeded`)).status, 200, 'a changed file is applied');
  });
});
