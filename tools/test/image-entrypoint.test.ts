/**
 * The image's entry point (the Dockerfile's ENTRYPOINT, run here as it is written) raises the soft
 * open-files limit to the hard one before Node starts, and passes the command's arguments on
 * unchanged: a container runtime that starts containers at a soft 1,024 (containerd 2) would
 * otherwise cap a push hub at about 800 connections with EMFILE instead of MAX_CONNECTIONS.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { it } from 'node:test';
import { parseOpenFilesLimit } from '../../packages/service-kit/src/open-files-limit.ts';

const dockerfile = readFileSync(fileURLToPath(new URL('../../Dockerfile', import.meta.url)), 'utf8');
const entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)![1]!) as string[];

/** Runs the entry point with these arguments under `ulimit -S -n <soft>`: its stdout. */
function runEntrypoint(soft: number, ...args: string[]): string {
  const run = spawnSync('sh', ['-c', `ulimit -S -n ${soft} && exec "$@"`, 'sh', ...entrypoint, ...args], {
    env: { PATH: `${dirname(process.execPath)}:${process.env.PATH}` },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout;
}

it('raises the soft open-files limit to the hard one, and runs node with the arguments given', () => {
  const hard = parseOpenFilesLimit(readFileSync('/proc/self/limits', 'utf8'))!.hard;
  assert.ok(hard > 512, `this machine's hard limit (${hard}) leaves nothing to raise`);
  const printed = runEntrypoint(
    512,
    '-e',
    "process.stdout.write(JSON.stringify({ limits: require('node:fs').readFileSync('/proc/self/limits', 'utf8'), argv: process.argv.slice(1), sourceMaps: process.execArgv }))",
    'a b',
    '$HOME',
  );
  const seen = JSON.parse(printed) as { limits: string; argv: string[]; sourceMaps: string[] };
  assert.deepEqual(parseOpenFilesLimit(seen.limits), { soft: hard, hard });
  assert.deepEqual(seen.argv, ['a b', '$HOME'], 'arguments pass unchanged, unsplit and unexpanded');
  assert.ok(seen.sourceMaps.includes('--enable-source-maps'));
});
