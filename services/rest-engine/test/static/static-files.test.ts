import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MiB, mib, settledMemory } from '@gatehouse/testkit';
import { compilePathPatterns, isValidPathPattern } from '../../src/static/path-pattern.ts';
import { etagMatches, StaticFolder, safeSegments, servedPaths } from '../../src/static/static-files.ts';

function site(): StaticFolder {
  const outside = mkdtempSync(join(tmpdir(), 'outside-'));
  writeFileSync(join(outside, 'secret.txt'), 'secret');
  const root = mkdtempSync(join(tmpdir(), 'site-'));
  mkdirSync(join(root, 'docs'));
  writeFileSync(join(root, 'index.html'), '<h1>home</h1>');
  writeFileSync(join(root, 'about.html'), '<h1>about</h1>');
  writeFileSync(join(root, 'docs', 'index.html'), '<h1>docs</h1>');
  writeFileSync(join(root, 'app.js'), 'x()');
  symlinkSync(join(outside, 'secret.txt'), join(root, 'leak.txt'));
  return new StaticFolder(root);
}

describe('static files', () => {
  const folder = site();

  it('maps /, folders and extension-less names to html files', async () => {
    assert.equal((await folder.find('/'))?.relative, 'index.html');
    assert.equal((await folder.find('/docs/'))?.relative, 'docs/index.html');
    assert.equal((await folder.find('/docs'))?.relative, 'docs/index.html');
    assert.equal((await folder.find('/about'))?.relative, 'about.html');
    assert.equal(await folder.find('/nothing.html'), undefined);
  });

  it('names each file by every request path that serves it (servedPaths inverts the lookup)', async () => {
    for (const relative of ['index.html', 'about.html', 'docs/index.html', 'app.js']) {
      for (const path of servedPaths(relative)) {
        assert.equal((await folder.find(path))?.relative, relative, `${path} serves ${relative}`);
      }
    }
    assert.deepEqual(servedPaths('docs/index.html'), ['/docs/index.html', '/docs/index', '/docs/', '/docs']);
    assert.deepEqual(servedPaths('index.html'), ['/index.html', '/index', '/']);
    assert.deepEqual(servedPaths('v1.2/a.b.html'), ['/v1.2/a.b.html']);
  });

  it('gives content types and a strong SHA-256 ETag', async () => {
    const js = await folder.find('/app.js');
    assert.equal(js?.contentType, 'text/javascript; charset=utf-8');
    assert.match(js!.etag, /^"[0-9a-f]{64}"$/);
    assert.ok(etagMatches(js!.etag, js!.etag));
    assert.ok(etagMatches(`"x", W/${js!.etag}`, js!.etag));
    assert.ok(!etagMatches('"other"', js!.etag));
  });

  it('refuses traversal, encoded or not, and links that leave the folder', async () => {
    assert.equal(safeSegments('/../etc/passwd'), undefined);
    assert.equal(safeSegments('/%2e%2e/etc/passwd'), undefined);
    assert.equal(safeSegments('/a/..%2f..%2fetc'), undefined);
    assert.equal(safeSegments('/a\\..\\b'), undefined);
    assert.equal(safeSegments('/a%00b'), undefined);
    assert.deepEqual(safeSegments('/a//b/'), ['a', 'b']);
    assert.equal(await folder.find('/../index.html'), undefined);
    assert.equal(await folder.find('/leak.txt'), undefined);
  });

  it('matches no-cache and filter path patterns', () => {
    const match = compilePathPatterns(['/', '/assets/*', '*.html']);
    assert.ok(match('/'));
    assert.ok(match('/assets/a.css'));
    assert.ok(match('/x/y.html'));
    assert.ok(!match('/index.htm'));
    assert.ok(isValidPathPattern('*.js'));
    assert.ok(!isValidPathPattern('*a*'));
    assert.ok(!isValidPathPattern('/a/**'));
  });
});

describe('static file cache under many distinct files', () => {
  it('holds at most its byte budget through 400 distinct files of 256 KiB', async () => {
    const root = mkdtempSync(join(tmpdir(), 'big-site-'));
    const content = Buffer.alloc(256 * 1024, 'x');
    for (let i = 0; i < 400; i++) writeFileSync(join(root, `f${i}.txt`), content);
    const maxBytes = 8 * MiB;
    const folder = new StaticFolder(root, maxBytes);
    const before = await settledMemory();
    for (let i = 0; i < 400; i++) assert.ok(await folder.find(`/f${i}.txt`));
    const after = await settledMemory();
    const grown = after.external - before.external;
    console.log(
      `static cache after 400 files of 256 KiB: ${mib(folder.cachedBytes)} cached, external +${mib(grown)}`,
    );
    assert.ok(folder.cachedBytes <= maxBytes);
    assert.ok(grown < maxBytes + MiB, `external memory grew by ${mib(grown)}`);
    rmSync(root, { recursive: true });
  });

  it('keeps the recently used files and never caches one over the budget', async () => {
    const root = mkdtempSync(join(tmpdir(), 'lru-site-'));
    for (const name of ['a', 'b', 'c']) writeFileSync(join(root, `${name}.txt`), Buffer.alloc(1000, name));
    writeFileSync(join(root, 'huge.txt'), Buffer.alloc(5000, 'h'));
    const folder = new StaticFolder(root, 2500);
    const a = await folder.find('/a.txt');
    await folder.find('/b.txt');
    assert.equal(await folder.find('/a.txt'), a, 'a is served from the cache');
    await folder.find('/c.txt');
    assert.equal(folder.cachedBytes, 2000);
    assert.equal(await folder.find('/a.txt'), a, 'a was used last and stayed; b went');
    assert.equal((await folder.find('/huge.txt'))?.body.length, 5000);
    assert.equal(folder.cachedBytes, 2000, 'the file over the budget is served but not cached');
    rmSync(root, { recursive: true });
  });
});
