/**
 * The deployment stages run long commands (tools/containers.sh, docker-compose, helm, kubectl) with a
 * time limit each. A limit that only signals the command itself is no limit: a script killed while
 * its build or broker child runs leaves that child holding the output pipes, and a call that waits
 * for the pipes to close waits forever (and keeps the test file's process alive past every timeout).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { run } from '../src/run-command.ts';

const dir = mkdtempSync(join(tmpdir(), 'run-command-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

it('returns what the command printed', async () => {
  assert.equal(await run('sh', ['-c', 'echo out; echo err >&2']), 'out\n');
});

it("fails with the command's output when it fails", async () => {
  await assert.rejects(run('sh', ['-c', 'echo why >&2; exit 3']), /ended with 3[\s\S]*why/);
});

it('ends a command that outlives its limit, with what it started, and fails', {
  timeout: 60_000,
}, async () => {
  const pidFile = join(dir, 'grandchild.pid');
  const started = performance.now();
  await assert.rejects(
    run('sh', ['-c', `sleep 120 & echo $! > ${pidFile}; echo begun; sleep 120`], { timeoutMs: 1000 }),
    (error: Error) => {
      assert.match(error.message, /outlived its limit of 1 s/);
      assert.match(error.message, /begun/, 'what it printed before');
      return true;
    },
  );
  assert.ok(performance.now() - started < 30_000, 'the call returns once the limit is out');
  const grandchild = Number(readFileSync(pidFile, 'utf8'));
  for (let i = 0; i < 50 && alive(grandchild); i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(alive(grandchild), false, 'the process the command started is ended too');
});

it('returns once the command is done, even when something it left behind holds its output', {
  timeout: 60_000,
}, async () => {
  const pidFile = join(dir, 'left.pid');
  const started = performance.now();
  // A daemon that forgets to close the pipes it inherited (a `nohup x &` without redirection).
  assert.equal(await run('sh', ['-c', `sleep 120 & echo $! > ${pidFile}; echo done`]), 'done\n');
  assert.ok(performance.now() - started < 30_000);
  process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
});

it('takes a command that exited in time as in time, whatever it left holding its output', {
  timeout: 60_000,
}, async () => {
  const pidFile = join(dir, 'left-late.pid');
  // Exits 0.5 s before its limit; what it left keeps the pipes past the limit.
  const out = await run('sh', ['-c', `sleep 120 & echo $! > ${pidFile}; echo done; sleep 1.5`], {
    timeoutMs: 2000,
  });
  assert.equal(out, 'done\n');
  process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
});
