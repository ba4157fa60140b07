import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { realPathInside } from '../src/index.ts';

describe('realPathInside', () => {
  let base: string;
  let folder: string;
  let outside: string;
  before(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'folder-path-')));
    folder = join(base, 'folder');
    outside = join(base, 'outside');
    mkdirSync(join(folder, 'sub'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(folder, 'a.txt'), 'a');
    writeFileSync(join(outside, 'secret.txt'), 's');
    symlinkSync(outside, join(folder, 'out-link'));
    symlinkSync(join(folder, 'sub'), join(folder, 'in-link'));
    symlinkSync(join(outside, 'secret.txt'), join(folder, 'secret-link.txt'));
    symlinkSync(join(outside, 'none.txt'), join(folder, 'dangling.txt'));
    // The folder reached through a link of its own: its real path is what counts.
    symlinkSync(folder, join(base, 'folder-link'));
  });
  after(() => rmSync(base, { recursive: true, force: true }));

  it('answers the real path of a file, a folder or a path not made yet inside the folder', () => {
    assert.equal(realPathInside(folder, join(folder, 'a.txt')), join(folder, 'a.txt'));
    assert.equal(realPathInside(folder, folder), folder);
    assert.equal(realPathInside(folder, join(folder, 'new/dir/b.txt')), join(folder, 'new/dir/b.txt'));
    assert.equal(realPathInside(folder, join(folder, 'in-link/c.txt')), join(folder, 'sub/c.txt'));
    assert.equal(
      realPathInside(join(base, 'folder-link'), join(base, 'folder-link/a.txt')),
      join(folder, 'a.txt'),
    );
    assert.equal(realPathInside(folder, join(folder, 'sub/../a.txt')), join(folder, 'a.txt'));
  });

  it('refuses `..` out of the folder, a link that leads out and a dangling link', () => {
    for (const path of [
      join(folder, '../outside/secret.txt'),
      join(folder, 'out-link/secret.txt'),
      join(folder, 'out-link/new/x.txt'),
      join(folder, 'secret-link.txt'),
      join(folder, 'dangling.txt'),
      join(folder, 'dangling.txt/x'),
      `${folder}-sibling/x.txt`,
      '/etc/passwd',
    ])
      assert.equal(realPathInside(folder, path), undefined, path);
    assert.equal(realPathInside(join(folder, 'dangling.txt'), join(folder, 'dangling.txt/x')), undefined);
  });

  it('takes a folder not made yet as the path it will have', () => {
    const later = join(base, 'later');
    assert.equal(realPathInside(later, join(later, 'x/y.txt')), join(later, 'x/y.txt'));
    assert.equal(
      realPathInside(join(base, 'folder-link/later'), join(folder, 'later/z')),
      join(folder, 'later/z'),
    );
    assert.equal(realPathInside(later, join(base, 'later-sibling/x')), undefined);
  });
});
