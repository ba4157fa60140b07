/**
 * Runs a service's main.ts as a child process, exactly as it runs in production, for tests that
 * need real separate processes: several replicas, a restart, a kill. The helper picks free ports
 * (API_PORT, and INBOUND_PORT when asked), waits until `GET /ready` on the API port answers 200,
 * keeps the last lines the process wrote for failure messages, and stops it with SIGTERM (the
 * graceful path every service has), falling back to SIGKILL. A child still running when the test
 * process exits is killed, so a failed test leaves no stray server behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const keptLines = 200;

export interface SpawnServiceOptions {
  /** The entry point, relative to the repository root (`services/push-hub/src/main.ts`) or absolute. */
  entry: string;
  /** Node.js options before the entry point (`--enable-source-maps`, `--import …`). */
  nodeArgs?: string[];
  /** Shown in errors; default: the folder above `src/` (`push-hub`). */
  name?: string;
  /** Settings on top of this process's environment; API_PORT / INBOUND_PORT given here are kept. */
  env?: Record<string, string>;
  /** Also give the service a public edge port (INBOUND_PORT). */
  publicPort?: boolean;
  /** How long to wait for `/ready` (default 60 s: a bound against a hang, not a speed check; a start
   * takes 10 s and more beside two test files and a container build on two cores). */
  readyTimeoutMs?: number;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcess {
  readonly name: string;
  readonly pid: number;
  /** `http://127.0.0.1:<API_PORT>` */
  readonly apiUrl: string;
  /** `http://127.0.0.1:<INBOUND_PORT>`, when a public port was asked for. */
  readonly publicUrl: string | undefined;
  /** The settings it was started with (ports included). */
  readonly env: Record<string, string>;
  readonly exited: Promise<ExitStatus>;
  /** The last lines it wrote on stdout and stderr. */
  output(): string;
  /** SIGTERM, then waits for the exit; SIGKILL when it is still running after `timeoutMs`. */
  stop(timeoutMs?: number): Promise<ExitStatus>;
  /** Stops it (if running) and starts it again with the same settings and ports; resolves once ready. */
  restart(): Promise<ServiceProcess>;
}

export async function spawnService(options: SpawnServiceOptions): Promise<ServiceProcess> {
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    ...options.env,
    API_PORT: options.env?.['API_PORT'] ?? String(await freePort()),
  };
  if (options.publicPort) env['INBOUND_PORT'] = options.env?.['INBOUND_PORT'] ?? String(await freePort());
  const entry = isAbsolute(options.entry) ? options.entry : resolve(repoRoot, options.entry);
  const name = options.name ?? entry.split('/').at(-3) ?? entry;

  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  // A child that inherits it would think it runs under `node --test`.
  delete childEnv['NODE_TEST_CONTEXT'];
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), entry], {
    cwd: repoRoot,
    env: childEnv,
    stdio: 'pipe',
  });
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (lines.length > keptLines) lines.splice(0, lines.length - keptLines);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = exitOf(child);
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  void exited.then(() => process.off('exit', killOnExit));

  const apiUrl = `http://127.0.0.1:${env['API_PORT']}`;
  const service: ServiceProcess = {
    name,
    pid: child.pid ?? -1,
    apiUrl,
    publicUrl: env['INBOUND_PORT'] === undefined ? undefined : `http://127.0.0.1:${env['INBOUND_PORT']}`,
    env,
    exited,
    output: () => lines.join('\n'),
    stop: (timeoutMs = 15_000) => stopChild(child, exited, timeoutMs),
    async restart() {
      await service.stop();
      return spawnService({ ...options, env });
    },
  };
  try {
    await untilReady(service, options.readyTimeoutMs ?? 60_000);
  } catch (err) {
    await service.stop(2000);
    throw err;
  }
  return service;
}

/**
 * Ports below Linux's ephemeral range (32768–60999): a port the OS hands out for `listen(0)` comes
 * from that range, where every outgoing connection (a service's Redis or Kafka client) also takes
 * its local port, so one could take it between this check and the service's listen (seen:
 * EADDRINUSE when several services of a topology start at once). And below Kubernetes' node ports
 * (30000–32767): CI runs the Helm release's cluster beside the node tests, and its Services take
 * node ports on this host (seen, with the cluster up: a fault-suite publisher's EADDRINUSE on 32066).
 */
const portRange = { first: 20_000, last: 29_999 };

/** A port nobody listens on right now, outside the ephemeral range; another listener could still take it first. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = portRange.first + Math.floor(Math.random() * (portRange.last - portRange.first + 1));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${portRange.first}-${portRange.last} after 50 tries`);
}

/**
 * `count` distinct ports nobody listens on right now. Picks made before anything binds them can
 * land on one port twice (seen: compose's REST engine and its kafka-tls broker both given 31363).
 */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  for (let attempt = 0; ports.size < count && attempt < count * 10; attempt++) ports.add(await freePort());
  if (ports.size < count) throw new Error(`no ${count} distinct free ports`);
  return [...ports];
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const server = createServer();
    server.once('error', () => resolveFree(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolveFree(true)));
  });
}

function exitOf(child: ChildProcess): Promise<ExitStatus> {
  return new Promise((resolveExit) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolveExit({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolveExit({ code, signal }));
  });
}

async function stopChild(child: ChildProcess, exited: Promise<ExitStatus>, timeoutMs: number) {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}

async function untilReady(service: ServiceProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitStatus: ExitStatus | undefined;
  void service.exited.then((status) => {
    exitStatus = status;
  });
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (exitStatus)
      throw new Error(
        `${service.name} exited during start-up (${exitStatus.signal ?? `code ${exitStatus.code}`}):\n${service.output()}`,
      );
    try {
      const res = await fetch(`${service.apiUrl}/ready`, { signal: AbortSignal.timeout(2000) });
      last = `${res.status} ${await res.text()}`;
      if (res.status === 200) return;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${service.name} not ready after ${timeoutMs} ms (last: ${last}):\n${service.output()}`);
}

/** `--import` this file (with LOADED_MODULES_FILE set) to log each module a child loads. */
export const loadedModulesRecorder = fileURLToPath(new URL('./loaded-modules-recorder.ts', import.meta.url));
