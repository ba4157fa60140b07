/**
 * tools/beside.sh runs `make test`'s deployment stages beside the node tests: the command runs in
 * the background at a lower CPU priority, `wait` prints its whole output and passes its exit code
 * on (so a failed compose or Helm stage still fails the run), and `stop` ends what still runs.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, afterEach, it } from 'node:test';

const script = fileURLToPath(new URL('../beside.sh', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'beside-test-'));

function beside(...args: string[]) {
  return spawnSync('bash', [script, ...args], {
    env: { ...process.env, BESIDE_DIR: join(dir, 'state'), BESIDE_NICE: '7' },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

afterEach(() => beside('stop'));
after(() => rmSync(dir, { recursive: true, force: true }));

it('runs the command in the background and prints its output when waited for', () => {
  const started = beside(
    'start',
    'quick',
    'sh',
    '-c',
    'sleep 1; echo "niceness $(nice)"; echo to-stderr >&2',
  );
  assert.equal(started.status, 0, started.stderr);
  assert.doesNotMatch(started.stdout, /niceness/, 'the output waits for `wait`');
  const waited = beside('wait', 'quick');
  assert.equal(waited.status, 0, waited.stdout);
  assert.match(waited.stdout, /niceness 7\n/);
  assert.match(waited.stdout, /to-stderr/);
  assert.match(waited.stdout, /quick: exit 0 after \d+s/);
});

it("passes the command's exit code on", () => {
  assert.equal(beside('start', 'failing', 'sh', '-c', 'echo broke; exit 3').status, 0);
  const waited = beside('wait', 'failing');
  assert.equal(waited.status, 3);
  assert.match(waited.stdout, /broke/);
});

it('fails the wait for a stage that was never started', () => {
  const waited = beside('wait', 'never');
  assert.notEqual(waited.status, 0);
  assert.match(waited.stdout, /never was never started/);
});

it('stops what still runs, child processes included, and its wait then fails', () => {
  const marker = join(dir, 'not-reached');
  assert.equal(beside('start', 'long', 'sh', '-c', `sleep 30 && touch ${marker}`).status, 0);
  const pid = Number(readFileSync(join(dir, 'state', 'long.pid'), 'utf8'));
  assert.equal(beside('stop').status, 0);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && spawnSync('pgrep', ['-s', String(pid)]).status === 0)
    spawnSync('sleep', ['0.2']);
  assert.notEqual(spawnSync('pgrep', ['-s', String(pid)]).status, 0, 'nothing of its session is left');
  assert.equal(existsSync(marker), false);
  assert.notEqual(beside('wait', 'long').status, 0);
});

it('ends a stage that outlives its limit when waited for, prints what it said, and fails', () => {
  const started = spawnSync(
    'bash',
    [script, 'start', 'hanging', 'sh', '-c', 'echo begun; sleep 120 & sleep 120'],
    {
      env: { ...process.env, BESIDE_DIR: join(dir, 'state'), BESIDE_LIMIT: '2' },
      encoding: 'utf8',
    },
  );
  assert.equal(started.status, 0, started.stderr);
  const pid = Number(readFileSync(join(dir, 'state', 'hanging.pid'), 'utf8'));
  const t = Date.now();
  const waited = beside('wait', 'hanging');
  assert.ok(Date.now() - t < 30_000, `waited ${Date.now() - t} ms`);
  assert.equal(waited.status, 124);
  assert.match(waited.stdout, /begun/);
  assert.match(waited.stdout, /hanging outlived its limit of 2s: stopped/);
  assert.notEqual(spawnSync('pgrep', ['-s', String(pid)]).status, 0, 'nothing of its session is left');
});

it('stops what runs in a process group of its own inside the stage (a `timeout` in it)', () => {
  assert.equal(beside('start', 'grouped', 'timeout', '120', 'sleep', '120').status, 0);
  const pid = Number(readFileSync(join(dir, 'state', 'grouped.pid'), 'utf8'));
  spawnSync('sleep', ['0.5']);
  assert.equal(beside('stop').status, 0);
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && spawnSync('pgrep', ['-s', String(pid)]).status === 0)
    spawnSync('sleep', ['0.2']);
  assert.notEqual(spawnSync('pgrep', ['-s', String(pid)]).status, 0, 'nothing of its session is left');
});

it('refuses a BESIDE_LIMIT that is not whole seconds, rather than wait unbounded', () => {
  const started = spawnSync('bash', [script, 'start', 'unbounded', 'sh', '-c', 'echo ran'], {
    env: { ...process.env, BESIDE_DIR: join(dir, 'state'), BESIDE_LIMIT: '1h' },
    encoding: 'utf8',
  });
  assert.notEqual(started.status, 0);
  assert.match(started.stdout, /BESIDE_LIMIT takes whole seconds, not '1h'/);
  assert.equal(existsSync(join(dir, 'state', 'unbounded.pid')), false);
});
