/**
 * Starts a Node process pinned to one CPU (performance-anchors §6.1: system under test on cpu0),
 * waits until it listens on its port, and can ask it (over IPC, when started with the heap probe)
 * for its heap after a full GC. `taskset -a -p` pins every thread of the running process, so the
 * child keeps its IPC channel.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';
import { cpuSecondsOf, pinProcess, rssBytesOf } from './proc.ts';

export interface PinnedProcess {
  name: string;
  child: ChildProcess;
  port: number;
  /** heapUsed after a full GC, in bytes (needs `probe: true`). */
  heapAfterGc(): Promise<number>;
  /**
   * process.memoryUsage() after a full GC (needs `probe: true`); with `reduce`, after V8's
   * memory-reducing GC, which also shrinks the young generation (see heap-probe.ts).
   */
  memoryAfterGc(reduce?: boolean): Promise<NodeJS.MemoryUsage>;
  /** User plus system CPU time so far, in seconds. */
  cpuSeconds(): number;
  /** Resident memory now (VmRSS), in bytes. */
  rssBytes(): number;
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
  /** Extra Node options placed before the script (e.g. `--cpu-prof`). */
  nodeArgs?: string[];
}

const heapProbe = fileURLToPath(new URL('./heap-probe.ts', import.meta.url));

/**
 * The heap probe for a server that runs built JavaScript: the same file compiled to JavaScript once
 * (esbuild), because preloading a .ts file would load Node's type stripper into the server and add
 * its memory (some 17 MiB resident) to every reading.
 */
let builtHeapProbe: string | undefined;
function heapProbeFor(script: string): string {
  if (script.endsWith('.ts')) return heapProbe;
  if (builtHeapProbe === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'heap-probe-'));
    builtHeapProbe = join(dir, 'heap-probe.mjs');
    const { code } = transformSync(readFileSync(heapProbe, 'utf8'), { loader: 'ts', format: 'esm' });
    writeFileSync(builtHeapProbe, code);
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return builtHeapProbe;
}

export async function spawnPinned(opts: SpawnOptions): Promise<PinnedProcess> {
  const probe = opts.probe ? ['--expose-gc', '--import', heapProbeFor(opts.script)] : [];
  const args = [...probe, ...(opts.nodeArgs ?? []), opts.script];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  pinProcess(child.pid!, opts.cpu);
  await waitForPort(opts.port, child, opts.name);
  const memoryAfterGc = async (reduce = false) => {
    child.send(reduce ? 'heap-reduce' : 'heap');
    const [message] = (await once(child, 'message')) as [NodeJS.MemoryUsage];
    return message;
  };
  return {
    name: opts.name,
    child,
    port: opts.port,
    async heapAfterGc() {
      return (await memoryAfterGc()).heapUsed;
    },
    memoryAfterGc,
    cpuSeconds() {
      return cpuSecondsOf(child.pid!);
    },
    rssBytes() {
      return rssBytesOf(child.pid!);
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** Resolves once something accepts connections on 127.0.0.1:`port`; fails when `child` exits first or at the timeout. */
export async function waitForPort(
  port: number,
  child: ChildProcess,
  name: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
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
  throw new Error(`${name} did not listen on ${port} within ${timeoutMs / 1000} s`);
}
