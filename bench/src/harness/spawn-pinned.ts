/**
 * Starts a Node process pinned to one CPU (performance-anchors §6.1: system under test on cpu0),
 * waits until it listens on its port, and can ask it (over IPC, when started with the heap probe)
 * for its heap after a full GC. `taskset -a -p` pins every thread of the running process, so the
 * child keeps its IPC channel.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';

export interface PinnedProcess {
  name: string;
  child: ChildProcess;
  port: number;
  /** heapUsed after a full GC, in bytes (needs `probe: true`). */
  heapAfterGc(): Promise<number>;
  /** User plus system CPU time so far, in seconds. */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  name: string;
  script: string;
  port: number;
  cpu: number;
  env?: Record<string, string>;
  /** Load the heap probe (and --expose-gc) so heapAfterGc() works. */
  probe?: boolean;
}

const heapProbe = fileURLToPath(new URL('./heap-probe.ts', import.meta.url));

export async function spawnPinned(opts: SpawnOptions): Promise<PinnedProcess> {
  const args = opts.probe ? ['--expose-gc', '--import', heapProbe, opts.script] : [opts.script];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  execFileSync('taskset', ['-a', '-p', '-c', String(opts.cpu), String(child.pid)], { stdio: 'ignore' });
  await waitForPort(opts.port, child, opts.name);
  return {
    name: opts.name,
    child,
    port: opts.port,
    async heapAfterGc() {
      child.send('heap');
      const [message] = (await once(child, 'message')) as [{ heapUsed: number }];
      return message.heapUsed;
    },
    cpuSeconds() {
      const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]);
      return ticks / 100;
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

async function waitForPort(port: number, child: ChildProcess, name: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode} before listening`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} did not listen on ${port} within 20 s`);
}
