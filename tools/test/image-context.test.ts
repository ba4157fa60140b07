/**
 * The image's build stage runs `node tools/build.ts` on the build context that .dockerignore
 * leaves. Every local file the build reaches through its imports must be in that context, or the
 * image build fails in the compose and Helm stages, minutes into CI (stop 43: tools/header-usage.ts
 * was imported by build.ts and ignored). The imports are read by esbuild, the context by Docker's
 * own .dockerignore rules (@balena/dockerignore).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import dockerignoreModule from '@balena/dockerignore';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../..', import.meta.url));
// A CommonJS module whose types declare `export default`: Node's default import is the function.
const dockerignore = dockerignoreModule as unknown as typeof dockerignoreModule.default;

/** The files (relative to the repository) that an entry point loads, packages left out. */
async function localImports(entry: string): Promise<string[]> {
  const result = await build({
    entryPoints: [entry],
    absWorkingDir: root,
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'silent',
  });
  return Object.keys(result.metafile.inputs).map((file) => relative(root, `${root}/${file}`));
}

async function contextFilter(): Promise<(path: string) => boolean> {
  const rules = await readFile(`${root}/.dockerignore`, 'utf8');
  return dockerignore({ ignorecase: false }).add(rules).createFilter();
}

describe('the image build context', () => {
  it('holds every local file that tools/build.ts imports', async () => {
    const inContext = await contextFilter();
    const files = await localImports('tools/build.ts');
    assert.ok(files.includes('tools/build.ts'), `esbuild saw: ${files.join(', ')}`);
    assert.ok(files.length > 1, 'build.ts imports local files, or this test checks nothing');
    assert.deepEqual(
      files.filter((file) => !inContext(file)),
      [],
      'ignored by .dockerignore but imported by the build',
    );
  });

  it('leaves out what the image must not carry', async () => {
    const inContext = await contextFilter();
    for (const file of [
      'tools/deps.sh',
      'services/push-hub/test/x.test.ts',
      '.cache/x',
      'docs/security.md',
    ]) {
      assert.equal(inContext(file), false, file);
    }
    assert.equal(inContext('services/push-hub/src/main.ts'), true);
  });
});
