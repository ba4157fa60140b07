/**
 * The suite's runner (tools/run-tests.ts): a file that leaves something open after its tests exits
 * anyway, a file still running after TEST_FILE_TIMEOUT is killed and reported while the files
 * after it still run, and the summary adds up every file's counts.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

const runner = fileURLToPath(new URL('../run-tests.ts', import.meta.url));
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}.fixture.ts`, import.meta.url));

function run(files: string[], env: Record<string, string>, options: string[] = []) {
  return new Promise<{ code: number | null; out: string; ms: number }>((resolve) => {
    const started = Date.now();
    execFile(
      process.execPath,
      [runner, '--test-timeout=600000', `--times=${join(scratch, 'times.json')}`, ...options, '--', ...files],
      // make test sets TEST_RETRIES for the suite: these runs retry only when a test asks.
      { env: { ...process.env, TEST_RETRIES: '0', ...env }, timeout: 120_000 },
      (err, stdout) =>
        resolve({ code: err ? ((err.code as number) ?? -1) : 0, out: stdout, ms: Date.now() - started }),
    );
  });
}

const scratch = mkdtempSync(join(tmpdir(), 'run-tests-'));

interface Run {
  name: string;
  start: number;
  end: number;
}

/** The fixtures' start and end times, from the log they append to. */
function runs(log: string): Run[] {
  const byName = new Map<string, Run>();
  for (const line of readFileSync(log, 'utf8').trim().split('\n')) {
    const { name, at, t } = JSON.parse(line) as { name: string; at: 'start' | 'end'; t: number };
    const run = byName.get(name) ?? { name, start: 0, end: 0 };
    run[at] = t;
    byName.set(name, run);
  }
  return [...byName.values()];
}

const overlap = (a: Run, b: Run) => a.start < b.end && b.start < a.end;

const count = (out: string, name: string) =>
  Number(new RegExp(`^ℹ ${name} (\\d+)$`, 'm').exec(out.split('# all test files')[1] ?? '')?.[1]);

describe('run-tests', () => {
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('lets a file that leaves something open exit once its tests are done', async () => {
    const { code, out, ms } = await run([fixture('leaves-a-client-open')], { TEST_FILE_TIMEOUT: '60' });
    assert.equal(code, 0, out);
    assert.equal(count(out, 'pass'), 1);
    assert.ok(ms < 50_000, `done in ${ms} ms, not at the 60 s bound`);
  });

  it('kills a file past its bound, reports it, and runs the next one', async () => {
    const report = join(scratch, 'failed-report.tsv');
    const { code, out } = await run(
      [fixture('hangs'), fixture('fails'), fixture('leaves-a-client-open')],
      { TEST_FILE_TIMEOUT: '3' },
      [`--report=${report}`],
    );
    assert.equal(code, 1);
    assert.match(out, /hangs\.fixture\.ts: still running after 3 s \(TEST_FILE_TIMEOUT\): killed/);
    assert.match(out, /✖ failed file: .*hangs\.fixture\.ts \(killed after \d+ s/);
    assert.match(out, /✖ failed file: .*fails\.fixture\.ts \(exit 1, 1 failed\)/);
    assert.equal(count(out, 'files'), 3);
    assert.equal(count(out, 'pass'), 2, 'the passing tests of the files after the hung one ran');
    assert.equal(count(out, 'fail'), 1);
    // Why each failed, beside the report: the failing test with its error, and the killed file.
    const why = readFileSync(join(scratch, 'test-failures.txt'), 'utf8');
    assert.match(why, /── \S*fails\.fixture\.ts \(exit 1, 1 failed\)\n✖ failing tests:/);
    assert.match(why, /1 !== 2/);
    assert.match(why, /── \S*hangs\.fixture\.ts \(killed after \d+ s/);
    assert.doesNotMatch(why, /leaves-a-client-open/);
  });

  it('ends the files it runs when it is told to stop (they run in process groups of their own)', async () => {
    // A stage's limit (tools/timed.sh --limit) signals the runner's group, which its files are not in.
    const pidFile = join(scratch, 'hangs.pid');
    const runnerProcess = spawn(
      process.execPath,
      [runner, `--times=${join(scratch, 'times.json')}`, '--', fixture('hangs')],
      { env: { ...process.env, TEST_RETRIES: '0', PID_FILE: pidFile }, stdio: 'ignore' },
    );
    const exited = once(runnerProcess, 'exit');
    for (let i = 0; i < 300 && !existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 100));
    const file = Number(readFileSync(pidFile, 'utf8'));
    runnerProcess.kill('SIGTERM');
    const timer = setTimeout(() => runnerProcess.kill('SIGKILL'), 30_000);
    const [code, signal] = await exited;
    clearTimeout(timer);
    assert.ok(code !== 0 || signal !== null, 'the runner did not pass');
    const alive = () => {
      try {
        process.kill(file, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 50 && alive(); i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(alive(), false, 'the file the runner ran is ended with it');
  });

  /** Whether two files (a unit one and a shared one) ran at the same time with `--jobs`. */
  async function ranAtOnce(jobs: number): Promise<boolean> {
    const log = join(scratch, `jobs-${jobs}.log`);
    const { code, out } = await run([fixture('unit-lane'), fixture('shared-lane')], { RUN_LOG: log }, [
      `--jobs=${jobs}`,
    ]);
    assert.equal(code, 0, out);
    const [a, b] = runs(log) as [Run, Run];
    return overlap(a, b);
  }

  it('runs files at once, up to --jobs', async () => {
    assert.equal(await ranAtOnce(2), true, 'with --jobs 2, the two files ran one after the other');
    assert.equal(await ranAtOnce(1), false, 'with --jobs 1, the two files ran at once');
  });

  it('never runs a broker user beside a file that stops brokers, but lets unit files run beside it', async () => {
    const log = join(scratch, 'alone.log');
    const { code, out } = await run(
      [fixture('alone-lane'), fixture('shared-lane'), fixture('unit-lane')],
      { RUN_LOG: log },
      ['--jobs=3'],
    );
    assert.equal(code, 0, out);
    const byName = Object.fromEntries(runs(log).map((r) => [r.name, r]));
    assert.ok(!overlap(byName['alone-lane']!, byName['shared-lane']!), JSON.stringify(byName));
    assert.ok(
      overlap(byName['alone-lane']!, byName['unit-lane']!) ||
        overlap(byName['shared-lane']!, byName['unit-lane']!),
    );
  });

  it('runs a file that restarts one broker beside a file that uses another', async () => {
    const log = join(scratch, 'kinesis.log');
    const { code, out } = await run([fixture('restarts-kinesis'), fixture('shared-lane')], { RUN_LOG: log }, [
      '--jobs=2',
    ]);
    assert.equal(code, 0, out);
    const [a, b] = runs(log) as [Run, Run];
    assert.ok(overlap(a, b), JSON.stringify(runs(log)));
  });

  it("points a unit file's brokers at a closed port, whatever the environment says", async () => {
    const { code, out } = await run([fixture('unit-lane')], {
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_PORT: '6379',
    });
    assert.equal(code, 0, out);
  });

  it('prints each file whole, between its own markers', async () => {
    const { out } = await run([fixture('fails'), fixture('unit-lane'), fixture('shared-lane')], {
      RUN_LOG: join(scratch, 'whole.log'),
    });
    for (const name of ['fails', 'unit-lane', 'shared-lane']) {
      const block = new RegExp(
        `▶ \\S*${name}\\.fixture\\.ts \\((\\w+)\\)\\n([\\s\\S]*?)◀ \\S*${name}\\.fixture\\.ts: `,
      ).exec(out);
      assert.ok(block, `${name}: no block in\n${out}`);
      const others = ['fails', 'unit-lane', 'shared-lane'].filter((n) => n !== name);
      for (const other of others)
        assert.doesNotMatch(block[2]!, new RegExp(`${other}\\.fixture`), `${name}'s block holds ${other}`);
    }
    assert.match(out, /▶ \S*shared-lane\.fixture\.ts \(shared\)/);
    assert.match(out, /▶ \S*unit-lane\.fixture\.ts \(unit\)/);
  });

  it('names a process a file left running, then kills it', async () => {
    const { code, out } = await run([fixture('leaves-a-process')], {});
    assert.equal(code, 0, out);
    assert.match(
      out,
      /⚠ \S*leaves-a-process\.fixture\.ts left a process running \(killed now\): \d+ sleep 97/,
    );
    const left = execFileSync('ps', ['-e', '-o', 'args='], { encoding: 'utf8' })
      .split('\n')
      .filter((a) => a === 'sleep 97');
    assert.deepEqual(left, []);
  });

  it('starts the longest file first, by the times of the run before, and reports this run', async () => {
    const log = join(scratch, 'order.log');
    const report = join(scratch, 'report.tsv');
    writeFileSync(
      join(scratch, 'times.json'),
      JSON.stringify({ [fixture('unit-lane')]: 1000, [fixture('shared-lane')]: 9000 }),
    );
    const { code, out } = await run([fixture('unit-lane'), fixture('shared-lane')], { RUN_LOG: log }, [
      '--jobs=1',
      `--report=${report}`,
    ]);
    assert.equal(code, 0, out);
    assert.deepEqual(
      runs(log)
        .sort((a, b) => a.start - b.start)
        .map((r) => r.name),
      ['shared-lane', 'unit-lane'],
    );
    const rows = readFileSync(report, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    assert.deepEqual(rows.map((r) => [r[0], r[1], r[3]]).sort(), [
      [fixture('shared-lane'), 'shared', 'passed'],
      [fixture('unit-lane'), 'unit', 'passed'],
    ]);
    const times = JSON.parse(readFileSync(join(scratch, 'times.json'), 'utf8')) as Record<string, number>;
    assert.ok(times[fixture('unit-lane')]! >= 1500, "this run's time replaced the one before");
  });

  it('runs a failed file once more with --retries: passed then, it is flaky and the suite passes; failed again, it fails', async () => {
    const mark = join(scratch, 'fails-once.mark');
    const report = join(scratch, 'retry-report.tsv');
    const { code, out } = await run(
      [fixture('fails-once'), fixture('fails'), fixture('unit-lane')],
      { FAILS_ONCE_MARK: mark, RUN_LOG: join(scratch, 'retry.log') },
      ['--retries=1', `--report=${report}`],
    );
    assert.equal(code, 1, 'the file that failed twice fails the suite');
    assert.match(
      out,
      /⚠ flaky file: \S*fails-once\.fixture\.ts \(exit 1, 1 failed, then passed on its retry \(flaky\)\)/,
    );
    assert.match(out, /✖ failed file: \S*fails\.fixture\.ts \(exit 1, 1 failed, then exit 1, 1 failed\)/);
    assert.equal(count(out, 'files'), 3, 'a file retried is counted once');
    assert.equal(count(out, 'fail'), 1);
    const flaky = readFileSync(join(scratch, 'test-flaky.txt'), 'utf8');
    assert.match(flaky, /── \S*fails-once\.fixture\.ts .*\n✖ failing tests:/);
    assert.match(flaky, /lost a race/);
    assert.doesNotMatch(readFileSync(join(scratch, 'test-failures.txt'), 'utf8'), /fails-once/);
    const rows = readFileSync(report, 'utf8').trim().split('\n');
    assert.equal(rows.length, 3);
  });

  it('runs no file twice without --retries', async () => {
    const mark = join(scratch, 'fails-once-no-retry.mark');
    const { code, out } = await run([fixture('fails-once')], { FAILS_ONCE_MARK: mark }, ['--retries=0']);
    assert.equal(code, 1);
    assert.match(out, /✖ failed file: \S*fails-once\.fixture\.ts \(exit 1, 1 failed\)$/m);
  });
});
