/**
 * The build cache outside the clone (tools/build-cache.sh): a clone's cached folders become links
 * into it, a clone that built before seeds it, a second clone finds what the first built, and
 * `none` keeps a clone to itself. Each case runs the script from a copy in a folder of its own.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

const script = new URL('../build-cache.sh', import.meta.url);
const scratch = mkdtempSync(join(tmpdir(), 'build-cache-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A folder laid out as a clone, holding only the script. */
function clone(name: string): string {
  const root = join(scratch, name);
  mkdirSync(join(root, 'tools'), { recursive: true });
  copyFileSync(script, join(root, 'tools/build-cache.sh'));
  return root;
}

const link = (root: string, store: string) =>
  execFileSync('bash', [join(root, 'tools/build-cache.sh'), 'link'], {
    env: { ...process.env, GATEHOUSE_BUILD_CACHE: store },
  });

describe('build-cache', () => {
  it("links a clone's cached folders into the cache, and a second clone finds what the first built there", () => {
    const store = join(scratch, 'store-a');
    const first = clone('first');
    link(first, store);
    for (const folder of ['traces', 'chart-tools', 'kafka', 'k8s/bin', 'k8s/images', 'test-times']) {
      assert.ok(lstatSync(join(first, '.cache', folder)).isSymbolicLink(), folder);
      assert.equal(readlinkSync(join(first, '.cache', folder)), join(store, folder.replace('/', '-')));
    }
    mkdirSync(join(first, '.cache/traces/bin'), { recursive: true });
    writeFileSync(join(first, '.cache/traces/bin/jaeger.stamp'), 'abc\n');
    const second = clone('second');
    link(second, store);
    assert.equal(readFileSync(join(second, '.cache/traces/bin/jaeger.stamp'), 'utf8'), 'abc\n');
    // Again: nothing changes.
    link(second, store);
    assert.equal(readFileSync(join(second, '.cache/traces/bin/jaeger.stamp'), 'utf8'), 'abc\n');
  });

  it('moves the builds of a clone made before the cache into it, and keeps them when the cache has its own', () => {
    const store = join(scratch, 'store-b');
    const old = clone('old');
    mkdirSync(join(old, '.cache/chart-tools/bin'), { recursive: true });
    writeFileSync(join(old, '.cache/chart-tools/bin/.helm.version'), 'v3\n');
    link(old, store);
    assert.ok(lstatSync(join(old, '.cache/chart-tools')).isSymbolicLink());
    assert.equal(readFileSync(join(store, 'chart-tools/bin/.helm.version'), 'utf8'), 'v3\n');
    const other = clone('other');
    mkdirSync(join(other, '.cache/chart-tools/bin'), { recursive: true });
    writeFileSync(join(other, '.cache/chart-tools/bin/.helm.version'), 'v2\n');
    link(other, store);
    assert.ok(!lstatSync(join(other, '.cache/chart-tools')).isSymbolicLink(), 'its own build stays');
    assert.equal(readFileSync(join(store, 'chart-tools/bin/.helm.version'), 'utf8'), 'v3\n');
  });

  it('keeps everything in the clone with GATEHOUSE_BUILD_CACHE=none', () => {
    const root = clone('alone');
    link(root, 'none');
    assert.ok(!existsSync(join(root, '.cache/traces')));
    assert.ok(!existsSync(join(scratch, 'none')));
  });
});
