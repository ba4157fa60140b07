/**
 * Every script a user runs answers `--help` and `-h` with its usage and does nothing else: the tools
 * (tools/*.sh, tools/k8s/*.sh, tools/*.ts) and the benchmarks' entry points (bench/src/*.bench.ts,
 * bench/src/run-all.ts), found by listing those folders, so a new script is checked without being
 * named here. Not scripts: a shell library (not executable, and its header says it is sourced, as
 * tools/k8s/lib.sh and tools/tls-deps.sh) and a TypeScript module with no entry point (it reads
 * neither process.argv nor import.meta.main, as tools/test-lanes.ts).
 *
 * Each script runs with `--help` and with `-h` (bash for .sh, node for .ts), two runs at a time, and
 * must exit 0 within 20 s, print its usage on stdout (naming itself or saying "usage"; -h the same as
 * --help) and add no entry to the clone's .cache/: its entries and those of its real folders, links
 * into the build cache not followed (two levels: deeper down are gigabytes of Go caches and podman
 * storage on a CI clone, and the files running brokers change while other test files run beside this
 * one). On its PATH, `go` and the commands that install, pin or load (apt-get, npm, mvn, podman,
 * taskset, wrk) are stubs that note the call and fail at once: a script that wrongly starts a build or
 * a benchmark fails fast instead of building for minutes, and the test names the command. (Shadowed,
 * not left out: chart-tools.sh and k8s/build.sh fall back to /usr/local/go/bin when PATH has no go.)
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

const root = fileURLToPath(new URL('../..', import.meta.url));
const timeoutMs = 20_000;
const atOnce = 2;
const flags = ['--help', '-h'];
const stubbed = ['go', 'apt-get', 'npm', 'mvn', 'podman', 'taskset', 'wrk'];

/** The scripts of a folder whose names end with `suffix`, sorted, as paths relative to the clone. */
function listed(folder: string, suffix: string): string[] {
  return readdirSync(join(root, folder))
    .filter((name) => name.endsWith(suffix))
    .sort()
    .map((name) => `${folder}/${name}`);
}

/** A shell library is sourced, not run: not executable, and its header says so. */
function isShellLibrary(file: string): boolean {
  const executable = (statSync(join(root, file)).mode & 0o111) !== 0;
  const header = readFileSync(join(root, file), 'utf8').split('\n').slice(0, 3).join('\n');
  if (!executable && !/\bsourced\b/i.test(header))
    assert.fail(`${file} is neither executable nor a library whose header says it is sourced`);
  return !executable;
}

/** A TypeScript module that is only imported: nothing in it reads its arguments or asks if it was run. */
function isModule(file: string): boolean {
  return !/process\.argv|import\.meta\.main/.test(readFileSync(join(root, file), 'utf8'));
}

const scripts = [
  ...[...listed('tools', '.sh'), ...listed('tools/k8s', '.sh')].filter((f) => !isShellLibrary(f)),
  ...listed('tools', '.ts').filter((f) => !isModule(f)),
  ...listed('bench/src', '.bench.ts'),
  'bench/src/run-all.ts',
];

/**
 * Folders other stages write while this file runs: in `make test` the deployment stages build the
 * images beside the node tests (tools/beside.sh), and a `-h` run cannot have made them.
 */
const writtenBeside = new Set(['images', 'podman', 'k8s', 'beside']);

/** The entries of .cache/ and of its real folders, without following links (into the build cache). */
function cacheEntries(): Set<string> {
  const cache = join(root, '.cache');
  const entries = new Set<string>();
  if (!existsSync(cache)) return entries;
  for (const name of readdirSync(cache)) {
    if (writtenBeside.has(name)) continue;
    entries.add(name);
    if (lstatSync(join(cache, name)).isDirectory())
      for (const inner of readdirSync(join(cache, name))) entries.add(`${name}/${inner}`);
  }
  return entries;
}

const stubs = mkdtempSync(join(tmpdir(), 'script-help-stubs-'));
for (const command of stubbed) {
  writeFileSync(
    join(stubs, command),
    `#!/bin/sh\necho "$(basename "$0") $*" >>"$SCRIPT_HELP_CALLS"\necho "script-help test: $(basename "$0") is a stub" >&2\nexit 127\n`,
  );
  chmodSync(join(stubs, command), 0o755);
}
after(() => rmSync(stubs, { recursive: true, force: true }));

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** The stubbed commands it called, with their arguments. */
  called: string[];
  /** Entries of .cache/ that appeared while it ran. */
  newCacheEntries: string[];
  /** The scripts that ran beside it (an entry in .cache/ may be theirs). */
  beside: Set<string>;
}

/** The scripts running now, each with the set of those that ran beside it. */
const running = new Map<string, Set<string>>();

/** Runs `script <flag>` in a process group of its own, killed whole when it ends or times out. */
function runHelp(script: string, flag: string): Promise<Run> {
  const cacheBefore = cacheEntries();
  const key = `${script} ${flag}`;
  const calls = join(stubs, `${script.replaceAll('/', '_')}${flag}.calls`);
  const beside = new Set(running.keys());
  for (const other of running.values()) other.add(key);
  running.set(key, beside);
  return new Promise((resolve) => {
    const child = spawn(script.endsWith('.sh') ? 'bash' : process.execPath, [script, flag], {
      cwd: root,
      env: { ...process.env, PATH: `${stubs}:${process.env['PATH'] ?? ''}`, SCRIPT_HELP_CALLS: calls },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // The group is gone already.
      }
    };
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      killGroup();
      running.delete(key);
      const cacheAfter = cacheEntries();
      resolve({
        code,
        signal,
        stdout,
        stderr,
        timedOut,
        called: existsSync(calls) ? readFileSync(calls, 'utf8').split('\n').filter(Boolean) : [],
        newCacheEntries: [...cacheAfter].filter((entry) => !cacheBefore.has(entry)),
        beside,
      });
    });
  });
}

/** Runs every script with each of `flags`, `atOnce` at a time; keyed `<script> <flag>`. */
async function runAll(): Promise<Map<string, Run>> {
  const runs = new Map<string, Run>();
  const queue = scripts.flatMap((script) => flags.map((flag) => [script, flag] as const));
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift())
      runs.set(next.join(' '), await runHelp(...next));
  };
  await Promise.all(Array.from({ length: atOnce }, worker));
  return runs;
}

describe('every script answers --help with its usage and does nothing else', () => {
  let runs: Map<string, Run>;
  before(async () => {
    runs = await runAll();
  });

  it('finds the scripts by listing their folders, and leaves the libraries out', () => {
    for (const expected of [
      'tools/deps.sh',
      'tools/k8s/build.sh',
      'tools/build.ts',
      'bench/src/push-hub.bench.ts',
    ])
      assert.ok(scripts.includes(expected), `${expected} is not among ${scripts.join(' ')}`);
    for (const library of ['tools/k8s/lib.sh', 'tools/tls-deps.sh', 'tools/test-lanes.ts'])
      assert.ok(!scripts.includes(library), `${library} is a library, not a script`);
  });

  for (const script of scripts) {
    it(script, () => {
      for (const flag of flags) assertHelp(script, flag, runs.get(`${script} ${flag}`)!);
      assert.equal(
        runs.get(`${script} -h`)!.stdout,
        runs.get(`${script} --help`)!.stdout,
        '-h prints what --help does',
      );
    });
  }
});

/** What a script given `flag` must have done: answered with its usage on stdout, and nothing else. */
function assertHelp(script: string, flag: string, run: Run): void {
  const output = `${script} ${flag}\nstdout:\n${run.stdout.slice(0, 2000)}\nstderr:\n${run.stderr.slice(0, 2000)}`;
  assert.ok(!run.timedOut, `still running after ${timeoutMs / 1000} s, killed: ${output}`);
  assert.deepEqual(run.called, [], `it ran ${stubbed.join(', ')} (stubs here): ${output}`);
  assert.equal(run.code, 0, `exit ${run.code ?? run.signal}: ${output}`);
  const name = script.split('/').pop()!;
  assert.ok(
    run.stdout.includes(name) || /usage/i.test(run.stdout),
    `stdout neither names ${name} nor says "usage": ${output}`,
  );
  const beside = run.beside.size ? ` (beside ${[...run.beside].join(', ')})` : '';
  assert.deepEqual(run.newCacheEntries, [], `new entries in .cache/ while ${script} ${flag} ran${beside}`);
}
