/**
 * A push hub started under an open-files limit below what MAX_CONNECTIONS needs says so at start,
 * naming both numbers and the ways out; under a limit that is enough it says nothing. The process
 * is started the way an operator's shell or a container runtime would limit it (`ulimit -n`).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { parseOpenFilesLimit } from '@gatehouse/service-kit';
import { waitFor } from '@gatehouse/testkit';
import { OPEN_FILES_BESIDES_CONNECTIONS, openFilesShortfall } from '../../src/limits/open-files-check.ts';

const main = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

/** The hub's log lines from its start until it listens, under `ulimit -n <nofile>`. */
async function startUpLog(nofile: number, maxConnections: number): Promise<string> {
  const child = spawn('sh', ['-c', `ulimit -n ${nofile} && exec "$0" "$1"`, process.execPath, main], {
    env: {
      PATH: process.env.PATH,
      TOKEN_SECRET: 'open-files-check-test-secret',
      STORE: 'memory',
      FANOUT_BUS: 'memory',
      CONTROL_BUS: 'memory',
      INBOUND_PORT: '0',
      API_PORT: '0',
      HOST: '127.0.0.1',
      MAX_CONNECTIONS: String(maxConnections),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  try {
    // A bound against a hang: a start takes 10 s and more on a busy box.
    await waitFor(() => out.includes('"listening"') || child.exitCode !== null, {
      what: 'the hub to listen',
      timeoutMs: 60_000,
    });
  } finally {
    child.kill('SIGTERM');
  }
  await once(child, 'exit');
  assert.match(out, /"listening"/, out);
  return out;
}

describe('open-files limit at start', () => {
  it('warns when the limit is below MAX_CONNECTIONS and what a replica holds besides', async () => {
    const out = await startUpLog(1024, 20_000);
    const line = out.split('\n').find((l) => l.includes('open-files limit'));
    assert.ok(line, out);
    const entry = JSON.parse(line) as Record<string, unknown>;
    assert.equal(entry['level'], 40);
    assert.equal(entry['soft'], 1024);
    assert.equal(entry['needed'], 20_000 + OPEN_FILES_BESIDES_CONNECTIONS);
    assert.match(String(entry['msg']), /RLIMIT_NOFILE 1024\b.*MAX_CONNECTIONS needs \(20256/);
    assert.match(String(entry['msg']), /lower MAX_CONNECTIONS/);
  });

  it('says nothing when the limit leaves room', async () => {
    const out = await startUpLog(1024, 1024 - OPEN_FILES_BESIDES_CONNECTIONS);
    assert.doesNotMatch(out, /open-files limit/);
  });

  it('reads /proc/<pid>/limits, unlimited included', () => {
    const text = [
      'Limit                     Soft Limit           Hard Limit           Units     ',
      'Max processes             95431                95431                processes ',
      'Max open files            1024                 524288               files     ',
    ].join('\n');
    assert.deepEqual(parseOpenFilesLimit(text), { soft: 1024, hard: 524288 });
    assert.equal(parseOpenFilesLimit(text.replace('1024 ', 'lots ')), undefined);
    assert.deepEqual(
      parseOpenFilesLimit('Max open files            unlimited            unlimited            files'),
      { soft: Number.POSITIVE_INFINITY, hard: Number.POSITIVE_INFINITY },
    );
    assert.equal(parseOpenFilesLimit('Max processes 1 1'), undefined);
    assert.equal(openFilesShortfall(100, undefined), undefined, 'an unknown limit warns of nothing');
    assert.deepEqual(openFilesShortfall(1000, { soft: 1000, hard: 4096 }), {
      needed: 1256,
      soft: 1000,
      hard: 4096,
    });
  });
});
