/**
 * The internal API is an express app an operator extends: their middleware runs before the token
 * check and every route (so their log sees the 401s too), their routes answer, and ours keep their
 * answers (401, 404, 503 + Retry-After) around them. INTERNAL_API_MIDDLEWARE loads the same hook
 * from a module file.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Express } from 'express';
import {
  DependencyUnavailableError,
  InternalApiAuth,
  loadInternalApiSetup,
  Router,
  type RunningHost,
  sendJson,
} from '../src/index.ts';
import { startTestHost } from './test-host.ts';

const token = 'operator-test-token-0123456789';

const items = new Router().get('/v9/item/:id', (_req, res, { id }) => sendJson(res, 200, { id }));

describe('internal API: operator middleware', () => {
  let host: RunningHost;
  const seen: string[] = [];
  before(async () => {
    host = await startTestHost({
      internalApiAuth: new InternalApiAuth(token),
      services: [
        { name: 'items', internal: (req, res) => items.handle(req, res) },
        {
          name: 'down',
          internal: (req) => {
            if (req.url !== '/v9/down') return false;
            throw new DependencyUnavailableError('store', 'connect ECONNREFUSED 10.0.0.1:6379');
          },
        },
      ],
      configureInternalApi: (app: Express) => {
        app.use((req, res, next) => {
          seen.push(`${req.method} ${req.path}`);
          res.setHeader('x-operator', 'seen');
          next();
        });
        app.get('/operator/version', (_req, res) => {
          res.json({ version: 'ops-1' });
        });
      },
    });
  });
  after(() => host?.stop());

  const url = (path: string) => `http://127.0.0.1:${host.apiPort}${path}`;
  const bearer = { authorization: `Bearer ${token}` };

  it('runs the operator middleware before the token check, on every path', async () => {
    const refused = await fetch(url('/metrics'));
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('x-operator'), 'seen');
    const health = await fetch(url('/health'));
    assert.equal(await health.text(), 'OK');
    assert.equal(health.headers.get('x-operator'), 'seen');
    assert.ok(seen.includes('GET /metrics') && seen.includes('GET /health'));
    // Only the exact probe paths are open; express would route these spellings to them. A
    // spelling whose canonical path is the probe's (canonical-path.ts) is the probe.
    for (const path of ['/health/', '/ready/', '/HEALTH', '/%68ealth/'])
      assert.equal((await fetch(url(path))).status, 401, path);
    assert.equal((await fetch(url('/%68ealth'))).status, 200);
  });

  it("answers the operator's routes, and keeps ours: 404, 405, 400 and 503 with Retry-After", async () => {
    assert.deepEqual(await (await fetch(url('/v9/item/a%20b'), { headers: bearer })).json(), { id: 'a b' });
    const wrongMethod = await fetch(url('/v9/item/a'), { method: 'DELETE', headers: bearer });
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get('allow'), 'GET');
    const version = await fetch(url('/operator/version'));
    assert.deepEqual(await version.json(), { version: 'ops-1' });
    const missing = await fetch(url('/nothing-here'), { headers: bearer });
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { error: 'not found' });
    const badEncoding = await fetch(url('/v9/item/%E0%A4%A'), { headers: bearer });
    assert.equal(badEncoding.status, 400);
    assert.match(
      ((await badEncoding.json()) as { error: string }).error,
      /^Bad request path: .*percent-encoding/,
    );
    const down = await fetch(url('/v9/down'), { headers: bearer });
    assert.equal(down.status, 503);
    assert.equal(down.headers.get('retry-after'), '1');
    assert.doesNotMatch(await down.text(), /10\.0\.0\.1/);
  });
});

describe('INTERNAL_API_MIDDLEWARE', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-mw-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it("mounts the module's default export on the internal API", async () => {
    const file = join(dir, 'audit.mjs');
    await writeFile(
      file,
      "export default (app) => app.use((req, res, next) => { res.setHeader('x-audit', req.method); next(); });\n",
    );
    const host = await startTestHost({ configureInternalApi: await loadInternalApiSetup(file) });
    try {
      const res = await fetch(`http://127.0.0.1:${host.apiPort}/health`);
      assert.equal(res.headers.get('x-audit'), 'GET');
    } finally {
      await host.stop();
    }
  });

  it('refuses a module without a function as its default export, naming it', async () => {
    const file = join(dir, 'wrong.mjs');
    await writeFile(file, 'export default 42;\n');
    await assert.rejects(loadInternalApiSetup(file), /wrong\.mjs: the default export must be a function/);
    assert.equal(await loadInternalApiSetup(undefined), undefined);
  });
});
