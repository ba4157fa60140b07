/**
 * ensureBuilt (tools/build.ts), what a benchmark calls before it starts built JavaScript: it builds a
 * package or REST app whose dist/ is missing a file's build or holds one older than the file, says
 * why, and leaves a fresh build alone. On folders of the test's own in a temporary directory.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ensureBuilt } from '../build.ts';

const dir = mkdtempSync(join(tmpdir(), 'build-stale-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs ensureBuilt on these folders only; resolves with what it built and what it said. */
async function ensure(options: { packages?: string[]; restApps?: string[] }) {
  const lines: string[] = [];
  const built = await ensureBuilt({
    packages: options.packages ?? [],
    restApps: options.restApps ?? [],
    log: (line) => lines.push(line),
  });
  return { built, said: lines.join('\n') };
}

/** A file's modification time moved `seconds` from now. */
function touch(file: string, seconds: number): void {
  const at = new Date(Date.now() + seconds * 1000);
  utimesSync(file, at, at);
}

describe('ensureBuilt', () => {
  it('builds a package whose dist/ is missing, then only when a source is newer or an output gone', async () => {
    const pkg = join(dir, 'pkg');
    mkdirSync(join(pkg, 'src'), { recursive: true });
    writeFileSync(
      join(pkg, 'src/main.ts'),
      "import { x } from './util.ts';\nconsole.log(x satisfies number);\n",
    );
    writeFileSync(join(pkg, 'src/util.ts'), 'export const x: number = 1;\n');
    writeFileSync(join(pkg, 'src/data.json'), '{}\n');

    let run = await ensure({ packages: [pkg] });
    assert.deepEqual(run.built, [pkg]);
    assert.match(run.said, /dist\/\S+ is missing; building it/);
    for (const file of ['main.js', 'util.js', 'data.json'])
      assert.ok(existsSync(join(pkg, 'dist', file)), file);

    run = await ensure({ packages: [pkg] });
    assert.deepEqual(run, { built: [], said: '' }, 'a fresh build is left alone');

    // Its build a minute older than the source: as after an edit, or a checkout that changed it.
    touch(join(pkg, 'dist/util.js'), -60);
    run = await ensure({ packages: [pkg] });
    assert.deepEqual(run.built, [pkg]);
    assert.match(run.said, /src\/util\.ts is newer than its build/);
    assert.ok(statSync(join(pkg, 'dist/util.js')).mtimeMs > Date.now() - 30_000, 'util.js built again');
    assert.deepEqual((await ensure({ packages: [pkg] })).built, []);

    rmSync(join(pkg, 'dist/main.js'));
    run = await ensure({ packages: [pkg] });
    assert.deepEqual(run.built, [pkg]);
    assert.match(run.said, /dist\/main\.js is missing/);
    assert.ok(existsSync(join(pkg, 'dist/main.js')));
  });

  it('builds a REST app whose dist/ is missing: functions compiled, other files copied', async () => {
    const app = join(dir, 'rest-app');
    mkdirSync(join(app, 'functions'), { recursive: true });
    writeFileSync(join(app, 'rest.yaml'), 'rest: []\n');
    writeFileSync(join(app, 'functions/hello.ts'), 'export default (): string => "hello";\n');

    let run = await ensure({ restApps: [app] });
    assert.deepEqual(run.built, [app]);
    assert.ok(existsSync(join(app, 'dist/rest.yaml')));
    assert.ok(existsSync(join(app, 'dist/functions/hello.js')));

    run = await ensure({ restApps: [app] });
    assert.deepEqual(run.built, []);
  });
});
