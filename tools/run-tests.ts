/**
 * Runs the node test files, several at once, each with a wall-clock bound, so no file can hang
 * the suite and two cores stay busy.
 *
 * - Each file runs as `node --test` of its own (as the runner's process isolation does anyway),
 *   with --test-force-exit so a process whose tests are done exits even with something left open,
 *   in a process group of its own, killed when still running after TEST_FILE_TIMEOUT seconds: that
 *   file is reported as failed, with how long it ran, and the suite goes on.
 * - Up to --jobs files run at once, by lane (tools/test-lanes.ts): a file that stops or restarts a
 *   broker runs with no other broker user beside it; unit files run beside anything, with their
 *   broker addresses pointed at a closed port. The longest files (by the times of the run before,
 *   kept in --times) start first.
 * - A file's output is printed whole when it ends, headed by its name, so files never interleave.
 *   What a file left running in its process group is named, then killed.
 * - A file that failed is run once more (--retries) after the others, when the box is quieter: a
 *   file that then passes is reported as flaky, with why its first run failed, and does not fail
 *   the suite; one that fails again does. A test that loses a race on a loaded two-core CI box
 *   once in fifty runs must not hide every other result, and must still be seen.
 * - The summary adds up every file's counts and lists the slowest files; --report writes this
 *   run's files, lanes, times and outcomes as TSV (the CI table, tools/ci-report.ts).
 *
 * Usage: node tools/run-tests.ts [options] [node --test flags…] -- file…
 *   --jobs N       files at once (default TEST_JOBS, else the number of CPUs)
 *   --lane L       only the files of lane L (unit, shared, alone); default all
 *   --times FILE   file times kept between runs, to start the longest first (default
 *                  .cache/test-times/times.json, in the build cache: a fresh clone finds them)
 *   --retries N    runs more of a failed file (default TEST_RETRIES, else 0)
 *   --report FILE  this run's results as TSV: file, lane, seconds, outcome; and beside it,
 *                  test-failures.txt: why each failed file failed (tools/failure-excerpt.ts),
 *                  and test-flaky.txt: why each file that passed on a retry failed before
 *   --list         print each file's lane and why, run nothing
 *   --help, -h     print this and exit
 * TEST_FILE_TIMEOUT (seconds, default 900).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, constants } from 'node:os';
import { dirname, join } from 'node:path';
import { failureExcerpt } from './failure-excerpt.ts';
import { headerUsage } from './header-usage.ts';
import { conflicts, type Lane, type LaneReading, laneOf } from './test-lanes.ts';

const separator = process.argv.indexOf('--');
const before = separator < 0 ? process.argv.slice(2) : process.argv.slice(2, separator);
const files = separator < 0 ? [] : process.argv.slice(separator + 1);
/** This runner's own options; every other flag before `--` goes to each `node --test`. */
const options: Record<string, string | boolean> = { times: '.cache/test-times/times.json' };
const flags: string[] = [];
for (let i = 0; i < before.length; i++) {
  const m = /^--(jobs|lane|times|report|retries|list|help)(?:=(.*))?$/.exec(
    before[i] === '-h' ? '--help' : before[i]!,
  );
  if (!m) flags.push(before[i]!);
  else if (m[1] === 'list' || m[1] === 'help') options[m[1]] = true;
  else options[m[1]!] = m[2] ?? before[++i] ?? '';
}
if (options['help']) {
  console.log(headerUsage(import.meta.url));
  process.exit(0);
}
const jobs = Math.max(1, Number(options['jobs'] ?? process.env['TEST_JOBS'] ?? availableParallelism()));
const fileTimeoutMs = Number(process.env['TEST_FILE_TIMEOUT'] ?? 900) * 1000;
const retries = Math.max(0, Number(options['retries'] ?? process.env['TEST_RETRIES'] ?? 0));

const counts = ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo'] as const;
type Counts = Record<(typeof counts)[number], number>;

interface TestFile extends LaneReading {
  file: string;
}

interface FileResult extends TestFile {
  /** The outcomes of this file's earlier runs that failed, when this is a retry. */
  failedBefore: string[];
  counts: Counts;
  ms: number;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  killed: boolean;
  leftovers: string[];
}

/** A unit file's broker addresses: a port where nothing listens (the discard port). */
const closedPort = '9';
function unitEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  for (const name of ['KAFKA_BROKERS', 'REDIS_URL', 'REDIS_CLUSTER_URL', 'NATS_URL', 'KINESIS_ENDPOINT'])
    delete env[name];
  for (const name of [
    'KAFKA_PORT',
    'REDIS_PORT',
    'REDIS_CLUSTER_PORT',
    'NATS_PORT',
    'KINESIS_PORT',
    'TRACES_OTLP_PORT',
    'TRACES_QUERY_PORT',
    'ZIPKIN_PORT',
    'SCHEMA_REGISTRY_PORT',
  ])
    env[name] = closedPort;
  return env;
}

/** The processes still in a group (its leader has exited), as `pid command`. */
function groupMembers(pgid: number): string[] {
  try {
    const out = execFileSync('ps', ['-e', '-o', 'pid=,pgid=,stat=,args='], { encoding: 'utf8' });
    // A zombie (stat Z) has ended already: only its parent's exit reaps it.
    return out
      .split('\n')
      .map((line) => /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null && Number(m[2]) === pgid && !m[3]!.startsWith('Z'))
      .map((m) => `${m[1]} ${m[4]!.slice(0, 160)}`);
  } catch {
    return [];
  }
}

/** The files running now. Each is in a process group of its own, which a signal to ours misses. */
const running = new Set<ChildProcess>();

/** Told to stop (a stage's limit, ^C): the files running end too (TERM, then KILL), then the runner. */
function endFilesOn(signal: 'SIGTERM' | 'SIGINT' | 'SIGHUP'): void {
  process.once(signal, () => {
    for (const child of running) killGroup(child, 'SIGTERM');
    const deadline = Date.now() + 5000;
    const check = setInterval(() => {
      if (running.size > 0 && Date.now() < deadline) return;
      clearInterval(check);
      for (const child of running) killGroup(child, 'SIGKILL');
      process.exit(128 + constants.signals[signal]);
    }, 100);
  });
}
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) endFilesOn(signal);

function killGroup(child: ChildProcess, signal: NodeJS.Signals) {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // Already gone.
  }
}

function runFile(test: TestFile, failedBefore: string[]): Promise<FileResult> {
  const started = Date.now();
  // A child that inherits it would report to a parent runner instead of printing its results.
  const env = { ...process.env };
  delete env['NODE_TEST_CONTEXT'];
  const child = spawn(process.execPath, ['--test', '--test-force-exit', ...flags, test.file], {
    env: test.lane === 'unit' ? unitEnv(env) : env,
    stdio: ['ignore', 'pipe', 'pipe'],
    // A group of its own, so the kill reaches what the file started too.
    detached: true,
  });
  running.add(child);
  const output: Buffer[] = [];
  child.stdout!.on('data', (chunk: Buffer) => output.push(chunk));
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk));
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    killGroup(child, 'SIGTERM');
    setTimeout(() => killGroup(child, 'SIGKILL'), 10_000).unref();
  }, fileTimeoutMs);
  return new Promise((resolve) => {
    child.on('close', (exitCode, signal) => {
      running.delete(child);
      clearTimeout(timer);
      const leftovers = groupMembers(child.pid!);
      if (leftovers.length > 0) killGroup(child, 'SIGKILL');
      const text = Buffer.concat(output).toString('utf8');
      const found = Object.fromEntries(counts.map((c) => [c, 0])) as Counts;
      for (const line of text.slice(-4096).split('\n')) {
        const m = /^ℹ (\w+) (\d+)/.exec(line);
        if (m && m[1]! in found) found[m[1] as keyof Counts] = Number(m[2]);
      }
      const result = {
        ...test,
        failedBefore,
        counts: found,
        ms: Date.now() - started,
        exitCode,
        signal,
        killed,
        leftovers,
      };
      printFile(result, text);
      if (exitCode !== 0 || killed)
        whyFailed.set(test.file, `── ${test.file} (${outcome(result)})\n${failureExcerpt(text)}`);
      resolve(result);
    });
  });
}

/** Why each file's last failed run failed, for --report. */
const whyFailed = new Map<string, string>();

const failedRun = (r: FileResult) => r.killed || r.exitCode !== 0;

function runOutcome(r: FileResult): string {
  if (r.killed) return `killed after ${Math.round(r.ms / 1000)} s (TEST_FILE_TIMEOUT)`;
  if (r.signal) return `ended by ${r.signal}`;
  return r.exitCode === 0 ? 'passed' : `exit ${r.exitCode}, ${r.counts.fail} failed`;
}

function outcome(r: FileResult): string {
  const before = r.failedBefore.map((o) => `${o}, then `).join('');
  return `${before}${runOutcome(r)}${r.failedBefore.length > 0 && !failedRun(r) ? ' on its retry (flaky)' : ''}`;
}

function printFile(r: FileResult, text: string) {
  process.stdout.write(`\n▶ ${r.file} (${r.lane})\n${text}`);
  if (r.killed)
    console.log(`✖ ${r.file}: still running after ${fileTimeoutMs / 1000} s (TEST_FILE_TIMEOUT): killed`);
  for (const p of r.leftovers) console.log(`⚠ ${r.file} left a process running (killed now): ${p}`);
  console.log(`◀ ${r.file}: ${outcome(r)} in ${(r.ms / 1000).toFixed(1)} s`);
}

function readTimes(path: string): Record<string, number> {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

/**
 * Starts files as --jobs and their brokers allow, in queue order: a file starts when it conflicts
 * with no running file, nor with a file that disrupts brokers and waits ahead of it in the queue
 * (so the files that use those brokers drain, and the restart gets its turn).
 */
async function runAll(queue: TestFile[], failedBefore = new Map<string, string[]>()): Promise<FileResult[]> {
  const results: FileResult[] = [];
  const running = new Map<TestFile, Promise<void>>();
  while (queue.length > 0 || running.size > 0) {
    const waiting: TestFile[] = [];
    const next = queue.findIndex((t) => {
      const free = ![...running.keys(), ...waiting].some((other) => conflicts(t, other));
      if (!free && t.disrupts.size > 0) waiting.push(t);
      return free;
    });
    if (running.size < jobs && next >= 0) {
      const [test] = queue.splice(next, 1) as [TestFile];
      running.set(
        test,
        runFile(test, failedBefore.get(test.file) ?? []).then((r) => {
          results.push(r);
          running.delete(test);
        }),
      );
      continue;
    }
    await Promise.race(running.values());
  }
  return results;
}

const times = readTimes(options['times'] as string);
const all = files.map((file) => ({ file, ...laneOf(file) }));
if (options['list']) {
  for (const t of all) console.log(`${t.lane}\t${t.file}\t${t.why}`);
  process.exit(0);
}
const chosen = options['lane'] ? all.filter((t) => t.lane === options['lane']) : all;
/** A file never timed: a guess by lane (broker restarts are the long ones, unit files the short). */
const guessMs: Record<Lane, number> = { alone: 120_000, shared: 30_000, unit: 5_000 };
// Longest first, so the last to start are short.
const expectedMs = (t: TestFile) => times[t.file] ?? guessMs[t.lane];
const queue = chosen.sort((a, b) => expectedMs(b) - expectedMs(a));
const started = Date.now();
let results = await runAll(queue);
for (let retry = 1; retry <= retries; retry++) {
  const again = results.filter(failedRun);
  if (again.length === 0) break;
  console.log(`\n# run ${retry + 1} of the ${again.length} failed file(s), the other files done`);
  const retried = await runAll(
    again.map(({ file, lane, why, uses, disrupts }) => ({ file, lane, why, uses, disrupts })),
    new Map(again.map((r) => [r.file, [...r.failedBefore, runOutcome(r)]])),
  );
  results = [...results.filter((r) => !failedRun(r)), ...retried];
}

const total = Object.fromEntries(counts.map((c) => [c, 0])) as Counts;
for (const r of results) for (const c of counts) total[c] += r.counts[c];
const failed = results.filter(failedRun);
const flaky = results.filter((r) => !failedRun(r) && r.failedBefore.length > 0);
const slowest = [...results].sort((a, b) => b.ms - a.ms).slice(0, 15);
console.log('\n# all test files');
for (const c of counts) console.log(`ℹ ${c} ${total[c]}`);
console.log(`ℹ files ${results.length}`);
console.log(`ℹ jobs ${jobs}`);
console.log(`ℹ duration_ms ${Date.now() - started}`);
console.log(`ℹ file time added up ${Math.round(results.reduce((n, r) => n + r.ms, 0) / 1000)} s`);
console.log('ℹ slowest files:');
for (const r of slowest) console.log(`ℹ   ${(r.ms / 1000).toFixed(1).padStart(6)} s  ${r.file} (${r.lane})`);
for (const r of flaky) console.log(`⚠ flaky file: ${r.file} (${outcome(r)})`);
for (const r of failed) console.log(`✖ failed file: ${r.file} (${outcome(r)})`);

mkdirSync(dirname(options['times'] as string), { recursive: true });
writeFileSync(
  options['times'] as string,
  JSON.stringify({ ...times, ...Object.fromEntries(results.map((r) => [r.file, r.ms])) }, null, 1),
);
if (options['report']) {
  mkdirSync(dirname(options['report'] as string), { recursive: true });
  const rows = results.map((r) => [r.file, r.lane, (r.ms / 1000).toFixed(1), outcome(r)].join('\t'));
  writeFileSync(options['report'] as string, `${rows.join('\n')}\n`);
  const excerpts = (rs: FileResult[]) => rs.map((r) => whyFailed.get(r.file)!).join('\n\n');
  writeFileSync(join(dirname(options['report'] as string), 'test-failures.txt'), excerpts(failed));
  writeFileSync(join(dirname(options['report'] as string), 'test-flaky.txt'), excerpts(flaky));
}
process.exitCode = failed.length > 0 ? 1 : 0;
