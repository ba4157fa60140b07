/**
 * Pushpin (Debian package `pushpin`, 1.36 on bookworm) as a side-by-side SSE hub: a temporary
 * config whose only route goes to grip-origin.ts (which answers `Grip-Hold: stream` on one channel),
 * publishing through the handler's HTTP publish API. The runner and every process it starts
 * (condure, zurl, pushpin-proxy, pushpin-handler) are pinned to the server CPU; memory and CPU are
 * summed over that process tree.
 *
 * Settings that differ from the packaged pushpin.conf, and why:
 * - `message_rate` 2500 → 1,000,000 and `message_hwm` 25,000 → 4 × connections: the defaults rate-limit
 *   deliveries to 2500/s, which would turn one event to 10k subscribers into a 4 s trickle by design.
 * - zurl is started by the runner with its sockets in the temp run dir (the package points the proxy
 *   at /var/run/zurl, which only exists when a system zurl runs) — without it Pushpin cannot reach
 *   the origin.
 * - `log_level` 1 (warnings): at the default every proxied request is logged.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { descendantsOf, treeCpuSecondsOf, treeRssBytesOf } from '../harness/proc.ts';
import { type PinnedProcess, spawnPinned, waitForPort } from '../harness/spawn-pinned.ts';

export interface PushpinPorts {
  /** Where clients connect (condure). */
  http: number;
  /** The handler's HTTP publish API. */
  publish: number;
  /** ZeroMQ publish and command sockets of the handler. */
  zmqPush: number;
  zmqCommand: number;
  origin: number;
}

export interface PushpinHub {
  channel: string;
  /** Publishes `content` as is (already an SSE frame) to every held stream of the channel. */
  publish(content: string): Promise<void>;
  /** Resident memory of the runner and all its processes (the origin not included). */
  rssBytes(): number;
  cpuSeconds(): number;
  /** The runner, its services and the origin, for an emergency kill. */
  pids(): number[];
  stop(): Promise<void>;
}

const originScript = fileURLToPath(new URL('./grip-origin.ts', import.meta.url));

/** The installed Pushpin version, or undefined when the package is missing. */
export function pushpinVersion(): string | undefined {
  try {
    return execFileSync('pushpin', ['--version'], { encoding: 'utf8' }).trim().split(/\s+/).pop();
  } catch {
    return undefined;
  }
}

export async function startPushpin(opts: {
  ports: PushpinPorts;
  cpu: number;
  maxConnections: number;
}): Promise<PushpinHub> {
  const channel = 'bench';
  const dir = mkdtempSync(join(tmpdir(), 'pushpin-bench-'));
  mkdirSync(join(dir, 'run'));
  mkdirSync(join(dir, 'log'));
  writeFileSync(join(dir, 'routes'), `* 127.0.0.1:${opts.ports.origin}\n`);
  writeFileSync(join(dir, 'pushpin.conf'), config(dir, opts.ports, opts.maxConnections));

  let origin: PinnedProcess | undefined;
  let runner: ChildProcess | undefined;
  try {
    origin = await spawnPinned({
      name: 'grip-origin',
      script: originScript,
      port: opts.ports.origin,
      cpu: opts.cpu,
      env: { PORT: String(opts.ports.origin), CHANNEL: channel },
    });
    runner = spawn('taskset', ['-c', String(opts.cpu), 'pushpin', '--config', join(dir, 'pushpin.conf')], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitForPort(opts.ports.http, runner, 'pushpin');
    await waitForPort(opts.ports.publish, runner, 'pushpin-handler');
  } catch (err) {
    if (runner) await stopRunner(runner);
    await origin?.stop();
    throw err;
  }
  const pid = runner.pid!;
  const started = runner;
  const startedOrigin = origin;
  return {
    channel,
    publish: (content) => publishItem(opts.ports.publish, channel, content),
    rssBytes: () => treeRssBytesOf(pid),
    cpuSeconds: () => treeCpuSecondsOf(pid),
    pids: () => [pid, ...descendantsOf(pid), startedOrigin.child.pid!],
    async stop() {
      await stopRunner(started);
      await startedOrigin.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function config(dir: string, ports: PushpinPorts, maxConnections: number): string {
  return `[global]
include=/usr/lib/pushpin/internal.conf
rundir=${join(dir, 'run')}
ipc_prefix=pushpin-
port_offset=0
stats_connection_ttl=120

[runner]
services=condure,zurl,pushpin-proxy,pushpin-handler
http_port=127.0.0.1:${ports.http}
logdir=${join(dir, 'log')}
log_level=1
client_buffer_size=8192
client_maxconn=${maxConnections}

[proxy]
routesfile=routes
zurl_out_specs=ipc://{rundir}/{ipc_prefix}zurl-in
zurl_out_stream_specs=ipc://{rundir}/{ipc_prefix}zurl-in-stream
zurl_in_specs=ipc://{rundir}/{ipc_prefix}zurl-out
sig_key=bench-only-key
updates_check=off

[handler]
push_in_spec=tcp://127.0.0.1:${ports.zmqPush}
push_in_http_addr=127.0.0.1
push_in_http_port=${ports.publish}
stats_spec=ipc://{rundir}/{ipc_prefix}stats
command_spec=tcp://127.0.0.1:${ports.zmqCommand}
message_rate=1000000
message_hwm=${4 * maxConnections}
`;
}

function publishItem(port: number, channel: string, content: string): Promise<void> {
  const body = JSON.stringify({ items: [{ channel, formats: { 'http-stream': { content } } }] });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/publish/',
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`pushpin publish: ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** SIGTERM to the runner (it stops its services); whatever it left behind after 10 s is killed by pid. */
async function stopRunner(runner: ChildProcess): Promise<void> {
  if (runner.exitCode !== null || runner.signalCode !== null) return;
  const services = descendantsOf(runner.pid!).map((pid) => [pid, commandOf(pid)] as const);
  const exited = once(runner, 'exit');
  runner.kill('SIGTERM');
  const timer = setTimeout(() => runner.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
  // Only a process still running the same command: the pid of one that exited may be reused.
  for (const [pid, command] of services) {
    if (command === undefined || commandOf(pid) !== command) continue;
    process.kill(pid, 'SIGKILL');
  }
}

function commandOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return undefined;
  }
}
