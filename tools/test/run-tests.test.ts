/**
 * The suite's runner (tools/run-tests.ts): a file that leaves something open after its tests exits
 * anyway, a file still running after TEST_FILE_TIMEOUT is killed and reported while the files
 * after it still run, and the summary adds up every file's counts.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const runner = fileURLToPath(new URL('../run-tests.ts', import.meta.url));
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}.fixture.ts`, import.meta.url));

function run(files: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; out: string; ms: number }>((resolve) => {
    const started = Date.now();
    execFile(
      process.execPath,
      [runner, '--test-timeout=600000', '--', ...files],
      { env: { ...process.env, ...env }, timeout: 120_000 },
      (err, stdout) =>
        resolve({ code: err ? ((err.code as number) ?? -1) : 0, out: stdout, ms: Date.now() - started }),
    );
  });
}

const count = (out: string, name: string) =>
  Number(new RegExp(`^ℹ ${name} (\\d+)$`, 'm').exec(out.split('# all test files')[1] ?? '')?.[1]);

describe('run-tests', () => {
  it('lets a file that leaves something open exit once its tests are done', async () => {
    const { code, out, ms } = await run([fixture('leaves-a-client-open')], { TEST_FILE_TIMEOUT: '60' });
    assert.equal(code, 0, out);
    assert.equal(count(out, 'pass'), 1);
    assert.ok(ms < 50_000, `done in ${ms} ms, not at the 60 s bound`);
  });

  it('kills a file past its bound, reports it, and runs the next one', async () => {
    const { code, out } = await run([fixture('hangs'), fixture('fails'), fixture('leaves-a-client-open')], {
      TEST_FILE_TIMEOUT: '3',
    });
    assert.equal(code, 1);
    assert.match(out, /hangs\.fixture\.ts: still running after 3 s \(TEST_FILE_TIMEOUT\): killed/);
    assert.match(out, /✖ failed file: .*hangs\.fixture\.ts \(killed after \d+ s/);
    assert.match(out, /✖ failed file: .*fails\.fixture\.ts \(exit 1, 1 failed\)/);
    assert.equal(count(out, 'files'), 3);
    assert.equal(count(out, 'pass'), 2, 'the passing tests of the files after the hung one ran');
    assert.equal(count(out, 'fail'), 1);
  });
});
