/**
 * Static content held in memory is served fresh: a file changed on disk is sent as it is now, with
 * its new ETag, even when the change kept its size and its modification time (an editor or a
 * deployment tool that restores the time, a file replaced by a rename).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sleep } from '@gatehouse/testkit';
import { configFolder, type RunningEngine, startEngine } from './engine-fixture.ts';

/** A whole second, which a file's time keeps exactly (a Date would drop its sub-millisecond part). */
const sameTime = 1_700_000_000;

/** Writes `path` with its access and modification times at `sameTime`. */
function writeDated(path: string, text: string): void {
  writeFileSync(path, text);
  utimesSync(path, sameTime, sameTime);
}

describe('static content changed on disk', () => {
  const site = mkdtempSync(join(tmpdir(), 'static-fresh-'));
  let run: RunningEngine;
  before(async () => {
    writeDated(join(site, 'page.html'), '<p>one</p>');
    writeDated(join(site, 'swap.html'), '<p>one</p>');
    const dir = configFolder({ 'application.yml': 'rest.automation: true\n', 'rest.yaml': 'rest: []\n' });
    run = await startEngine({ REST_CONFIG_FOLDER: dir, STATIC_HTML_FOLDER: `file:${site}` });
  });
  after(async () => {
    await run.stop();
    rmSync(site, { recursive: true, force: true });
  });

  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${run.base}${path}`, { headers });
    return { status: res.status, etag: res.headers.get('etag'), body: await res.text() };
  };

  it('serves a file rewritten in place with the same size and modification time as it is now', async () => {
    const first = await get('/page.html');
    assert.equal(first.body, '<p>one</p>');
    await sleep(50); // past the file system's clock tick
    writeDated(join(site, 'page.html'), '<p>two</p>');
    const second = await get('/page.html');
    assert.equal(second.body, '<p>two</p>');
    assert.notEqual(second.etag, first.etag);
    assert.equal((await get('/page.html', { 'if-none-match': first.etag! })).status, 200);
    assert.equal((await get('/page.html', { 'if-none-match': second.etag! })).status, 304);
  });

  it('serves a file replaced by a rename with the same size and modification time as it is now', async () => {
    const first = await get('/swap.html');
    assert.equal(first.body, '<p>one</p>');
    await sleep(50);
    writeDated(join(site, 'swap.tmp'), '<p>new</p>');
    renameSync(join(site, 'swap.tmp'), join(site, 'swap.html'));
    const second = await get('/swap.html');
    assert.equal(second.body, '<p>new</p>');
    assert.notEqual(second.etag, first.etag);
  });
});
