/**
 * Runs the node test files one after another, each with a wall-clock bound, so no file can hang
 * the suite: `node --test` waits for a file's process to exit, and a file that leaves a client
 * reconnecting after a failed assertion never does. Each file runs as `node --test` of its own
 * (as the runner's process isolation does anyway), with --test-force-exit so a process whose tests
 * are done exits even with something left open, and is killed (its whole process group) when it
 * is still running after TEST_FILE_TIMEOUT seconds: that file is reported as failed, with how
 * long it ran, and the suite goes on. The runner's own output of each file is passed through; the
 * summary at the end adds up every file's counts.
 *
 * Usage: node tools/run-tests.ts [node --test flags…] -- file…
 * TEST_FILE_TIMEOUT (seconds, default 900).
 */
import { spawn } from 'node:child_process';

const fileTimeoutMs = Number(process.env['TEST_FILE_TIMEOUT'] ?? 900) * 1000;
const separator = process.argv.indexOf('--');
const flags = separator < 0 ? [] : process.argv.slice(2, separator);
const files = process.argv.slice(separator < 0 ? 2 : separator + 1);

const counts = ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo'] as const;
type Counts = Record<(typeof counts)[number], number>;

interface FileResult {
  file: string;
  counts: Counts;
  ms: number;
  exitCode: number | null;
  killed: boolean;
}

function runFile(file: string): Promise<FileResult> {
  const started = Date.now();
  // A child that inherits it would report to a parent runner instead of printing its results.
  const env = { ...process.env };
  delete env['NODE_TEST_CONTEXT'];
  const child = spawn(process.execPath, ['--test', '--test-force-exit', ...flags, file], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
    // A group of its own, so the kill reaches what the file started too.
    detached: true,
  });
  const found = Object.fromEntries(counts.map((c) => [c, 0])) as Counts;
  let tail = '';
  child.stdout.on('data', (chunk: Buffer) => {
    process.stdout.write(chunk);
    tail = (tail + chunk.toString('utf8')).slice(-4096);
  });
  let killed = false;
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // Already gone.
    }
  };
  const timer = setTimeout(() => {
    killed = true;
    killGroup('SIGTERM');
    setTimeout(() => killGroup('SIGKILL'), 10_000).unref();
  }, fileTimeoutMs);
  return new Promise((resolve) => {
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      for (const line of tail.split('\n')) {
        const m = /^ℹ (\w+) (\d+)/.exec(line);
        if (m && m[1]! in found) found[m[1] as keyof Counts] = Number(m[2]);
      }
      resolve({ file, counts: found, ms: Date.now() - started, exitCode, killed });
    });
  });
}

const results: FileResult[] = [];
for (const file of files) {
  const result = await runFile(file);
  if (result.killed)
    console.log(`✖ ${file}: still running after ${fileTimeoutMs / 1000} s (TEST_FILE_TIMEOUT): killed`);
  results.push(result);
}

const total = Object.fromEntries(counts.map((c) => [c, 0])) as Counts;
for (const r of results) for (const c of counts) total[c] += r.counts[c];
const failedFiles = results.filter((r) => r.killed || r.exitCode !== 0);
console.log('\n# all test files');
for (const c of counts) console.log(`ℹ ${c} ${total[c]}`);
console.log(`ℹ files ${results.length}`);
console.log(`ℹ duration_ms ${results.reduce((n, r) => n + r.ms, 0)}`);
const slowest = [...results].sort((a, b) => b.ms - a.ms).slice(0, 5);
console.log(`ℹ slowest files: ${slowest.map((r) => `${r.file} ${Math.round(r.ms / 1000)} s`).join(', ')}`);
for (const r of failedFiles) {
  const why = r.killed ? `killed after ${Math.round(r.ms / 1000)} s` : `exit ${r.exitCode}`;
  console.log(`✖ failed file: ${r.file} (${why}, ${r.counts.fail} failed)`);
}
process.exitCode = failedFiles.length > 0 ? 1 : 0;
