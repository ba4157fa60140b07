/**
 * The static-content rules (`filter`, `no-cache-pages`) decide on the file served, not on how the
 * request spelled it: `/forbidden` serves forbidden.html, `/private/` serves private/index.html, a
 * link serves its target, and each is filtered as the file is. The filter here refuses whatever it
 * is asked about, so a 403 says the engine called it; its message says which path it was given.
 */
import assert from 'node:assert/strict';
import { existsSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { configFolder, type RunningEngine, rawRequest, startEngine } from './engine-fixture.ts';

const page = (name: string) => `<h1>${name}</h1>`;

let run: RunningEngine;
let caseInsensitive: boolean;
before(async () => {
  const dir = configFolder({
    'application.yml': 'rest.automation: true\nstatic.html.folder: classpath:/static\n',
    'rest.yaml': [
      'rest: []',
      'static-content:',
      '  no-cache-pages: ["/fresh.html"]',
      '  filter:',
      '    path: ["/forbidden.html", "/private/*", "/with space.html"]',
      '    exclusion: ["/private/open.html"]',
      '    service: test.filter',
      '',
    ].join('\n'),
    'functions/filter.ts': [
      "import { AppException, defineFunction } from '@gatehouse/functions';",
      'export default defineFunction({',
      "  route: 'test.filter',",
      '  handleEvent: (_headers, request) => {',
      "    const probe = request.getQueryParameter('probe');",
      "    throw new AppException(403, 'filtered ' + request.getUrl() + (probe === undefined ? '' : ' probe=' + probe));",
      '  },',
      '});',
      '',
    ].join('\n'),
    'static/forbidden.html': page('forbidden'),
    'static/open.html': page('open'),
    'static/fresh.html': page('fresh'),
    'static/with space.html': page('space'),
    'static/private/index.html': page('private'),
    'static/private/open.html': page('private open'),
  });
  // A link inside the folder to a filtered file is that file.
  symlinkSync(join(dir, 'static', 'forbidden.html'), join(dir, 'static', 'alias.html'));
  caseInsensitive = existsSync(join(dir, 'static', 'FORBIDDEN.html'));
  run = await startEngine({ REST_CONFIG_FOLDER: dir });
});
after(() => run.stop());

const get = (target: string) => rawRequest(run.base, 'GET', target);

async function assertFiltered(targets: string[], served: string): Promise<void> {
  for (const target of targets) {
    const res = await get(target);
    assert.equal(res.status, 403, `${target}: ${res.status} ${res.body}`);
    assert.equal(JSON.parse(res.body).message, `filtered ${served}`, target);
  }
}

describe('static-content rules decide on the file served', () => {
  it('filters forbidden.html in every spelling that serves it', async () => {
    await assertFiltered(
      [
        '/forbidden',
        '/forbidden.html',
        '//forbidden.html',
        '/a/../forbidden.html',
        '/%66orbidden.html',
        '/./forbidden',
        '/forbidden%2Ehtml',
        '/x/%2e%2e/forbidden',
        '/alias.html',
        '/alias',
      ],
      '/forbidden.html',
    );
  });

  it("gives the filter the request's query parameters", async () => {
    const res = await get('/forbidden.html?probe=42&other=x');
    assert.equal(res.status, 403, res.body);
    assert.equal(JSON.parse(res.body).message, 'filtered /forbidden.html probe=42');
  });

  it('filters a folder index however the folder is named, and keeps exclusions', async () => {
    await assertFiltered(
      ['/private/', '/private', '//private//', '/private/index', '/private/index.html', '/private/./'],
      '/private/index.html',
    );
    for (const target of ['/private/open.html', '/private/open', '/open', '/open.html']) {
      const res = await get(target);
      assert.equal(res.status, 200, target);
    }
  });

  it('filters a file whose name needs escapes by its name, however escaped', async () => {
    await assertFiltered(['/with%20space', '/with%20space.html', '/with%20sp%61ce.html'], '/with space.html');
  });

  it('serves no file for another case or a trailing slash after a file name', async () => {
    const upper = await get('/FORBIDDEN.html');
    // The folder's file system decides whether case matters; either way nothing unfiltered.
    if (caseInsensitive) assert.equal(upper.status, 403);
    else assert.equal(upper.status, 404);
    assert.equal((await get('/forbidden.html/')).status, 404);
  });

  it('sends a no-cache page with no-cache headers however it is named', async () => {
    for (const target of ['/fresh', '/fresh.html', '//fresh.html', '/%66resh']) {
      const res = await get(target);
      assert.equal(res.status, 200, target);
      assert.equal(res.headers['cache-control'], 'no-cache, no-store', target);
      assert.equal(res.headers['etag'], undefined, target);
    }
    const cached = await get('/open');
    assert.match(String(cached.headers['etag']), /^"[0-9a-f]{64}"$/);
  });
});
