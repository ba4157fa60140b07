/**
 * The two servers of mercury.bench.ts, each started under `taskset` so that it sees only its CPUs
 * from its first instruction (a JVM sizes its GC and JIT threads, and picks its collector, from the
 * CPUs it sees at start; pinning it afterwards would leave it sized for two).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSecondsOf, rssBytesOf } from '../harness/proc.ts';
import { waitForPort } from '../harness/spawn-pinned.ts';
import type { BenchConfig } from './config.ts';

export interface Server {
  /** `gatehouse-base`: the engine of another checkout (`--base`), measured beside this one. */
  name: 'gatehouse' | 'gatehouse-base' | 'mercury';
  port: number;
  cpuSeconds(): number;
  rssBytes(): number;
  stop(): Promise<void>;
}

const root = fileURLToPath(new URL('../../../', import.meta.url));
const functions = fileURLToPath(new URL('../baselines/mercury-functions', import.meta.url));

/** A JVM on one shared CPU took 47 s to listen here (class scanning, JIT of the start-up). */
const readyTimeoutMs = 180_000;

/** Mercury's heap cap, as a user sizing a small service would set it (the runs used it). */
export const mercuryHeap = '-Xmx512m';

/** The REST engine of `checkout` (this one by default); `nodeArgs` such as `--cpu-prof`. */
export async function startGatehouse(
  config: BenchConfig,
  port: number,
  cpus: string,
  options: { checkout?: string; nodeArgs?: string[] } = {},
): Promise<Server> {
  const engineMain = join(options.checkout ?? root, 'services/rest-engine/src/main.ts');
  const args = ['-c', cpus, process.execPath, ...(options.nodeArgs ?? []), engineMain];
  const child = spawn('taskset', args, {
    env: {
      ...process.env,
      REST_CONFIG_FOLDER: config.dir,
      FUNCTIONS_PATH: functions,
      REST_SERVER_PORT: String(port),
      REST_SERVER_HOST: '127.0.0.1',
      API_PORT: String(port + 1),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return started(options.checkout ? 'gatehouse-base' : 'gatehouse', child, port);
}

export async function startMercury(
  config: BenchConfig,
  port: number,
  cpus: string,
  java: { bin: string; jar: string },
): Promise<Server> {
  const props = {
    'rest.server.port': String(port),
    'rest.automation': 'true',
    'yaml.rest.automation': config.restYaml,
    'yaml.flow.automation': config.flowsYaml,
    'static.html.folder': config.staticFolder,
  };
  const args = [mercuryHeap, ...Object.entries(props).map(([k, v]) => `-D${k}=${v}`), '-jar', java.jar];
  // Mercury logs every start-up step (stdout) and log4j's and the JVM's notices (stderr): dropped,
  // as Gatehouse's info lines are (LOG_LEVEL warn); MERCURY_LOG=1 shows them.
  const log = process.env['MERCURY_LOG'] ? 'inherit' : 'ignore';
  const child = spawn('taskset', ['-c', cpus, java.bin, ...args], {
    stdio: ['ignore', log, log],
  });
  return started('mercury', child, port);
}

/** Servers still running: stopped when the benchmark itself is stopped (Ctrl-C), not left behind. */
const running = new Set<ChildProcess>();
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    for (const child of running) child.kill('SIGKILL');
    process.exit(130);
  });

async function started(name: Server['name'], child: ChildProcess, port: number): Promise<Server> {
  const pid = child.pid!;
  running.add(child);
  child.once('exit', () => running.delete(child));
  try {
    await waitForPort(port, child, name, readyTimeoutMs);
  } catch (e) {
    child.kill('SIGKILL');
    throw new Error(`${(e as Error).message}${name === 'mercury' ? ' (MERCURY_LOG=1 shows its log)' : ''}`);
  }
  return {
    name,
    port,
    cpuSeconds: () => cpuSecondsOf(pid),
    rssBytes: () => rssBytesOf(pid),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const exited = once(child, 'exit');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
