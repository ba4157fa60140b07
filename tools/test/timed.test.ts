/**
 * tools/timed.sh runs one stage of `make test` and says how long it took. With --limit, a stage that
 * hangs is ended, with everything it started, once its limit is out: CI then fails on that stage
 * with time left to print why, instead of being cut off at its wall with nothing said.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, it } from 'node:test';

const script = fileURLToPath(new URL('../timed.sh', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'timed-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function timed(...args: string[]) {
  return spawnSync('bash', [script, ...args], {
    env: { ...process.env, CI_REPORT_DIR: dir, BESIDE: '' },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

function alive(pid: number): boolean {
  return spawnSync('kill', ['-0', String(pid)]).status === 0;
}

it('says how long a stage took and keeps its exit code', () => {
  const ran = timed('failing stage', 'sh', '-c', 'echo working; exit 3');
  assert.equal(ran.status, 3);
  assert.match(ran.stdout, /^== failing stage\nworking\n== failing stage: failed \(exit 3\) in \d+s\n$/);
});

it('ends a stage that outlives its limit, with what it started, and fails it', () => {
  const pidFile = join(dir, 'grandchild.pid');
  const started = Date.now();
  const ran = timed(
    '--limit',
    '2',
    'hanging stage',
    'sh',
    '-c',
    `sleep 120 & echo $! > ${pidFile}; sleep 120`,
  );
  assert.ok(Date.now() - started < 30_000, `returned after ${Date.now() - started} ms`);
  assert.equal(ran.status, 124);
  assert.match(ran.stdout, /== hanging stage: timed out \(its limit is 2s\) in \d+s/);
  const grandchild = Number(readFileSync(pidFile, 'utf8'));
  for (let i = 0; i < 50 && alive(grandchild); i++) spawnSync('sleep', ['0.1']);
  assert.equal(alive(grandchild), false, 'what the stage started is ended too');
  assert.match(readFileSync(join(dir, 'stages.tsv'), 'utf8'), /^hanging stage\t\d+\t124\t$/m);
});

it('lets a stage inside its limit finish as it would without one', () => {
  const ran = timed('--limit', '30', 'quick stage', 'sh', '-c', 'echo fine');
  assert.equal(ran.status, 0);
  assert.match(ran.stdout, /== quick stage: ok in \d+s/);
});

it("passes an interrupt on to a stage with a limit (its process group is not the terminal's)", async () => {
  const pidFile = join(dir, 'interrupted.pid');
  const child = spawn(
    'bash',
    [
      script,
      '--limit',
      '120',
      'interrupted stage',
      'sh',
      '-c',
      `sleep 120 & echo $! > ${pidFile}; sleep 120`,
    ],
    {
      env: { ...process.env, CI_REPORT_DIR: dir },
      stdio: 'ignore',
    },
  );
  for (let i = 0; i < 100 && !existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 100));
  const grandchild = Number(readFileSync(pidFile, 'utf8'));
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const [code] = await exited;
  clearTimeout(timer);
  assert.notEqual(code, 0);
  for (let i = 0; i < 50 && alive(grandchild); i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(alive(grandchild), false, 'the stage and what it started are ended');
});

it('refuses a limit that is not whole seconds, rather than run the stage unbounded', () => {
  const ran = timed('--limit', '1h', 'stage', 'sh', '-c', 'echo ran');
  assert.equal(ran.status, 2);
  assert.match(ran.stderr, /whole seconds, not '1h'/);
  assert.doesNotMatch(ran.stdout, /ran/);
});
