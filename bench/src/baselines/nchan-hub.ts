/**
 * Nchan (nginx's pub/sub module in C; Debian `libnginx-mod-nchan`, 1.3.6 on bookworm) as a
 * side-by-side SSE hub: a config written into a temp dir, one worker process, an EventSource
 * subscriber location and an HTTP publisher location on one channel. nginx (master and its one
 * worker) is pinned to the server CPU, started in the foreground and stopped by its PID; memory and
 * CPU are summed over master and worker (no GC: C).
 *
 * Settings that differ from a packaged default, and why:
 * - `worker_processes 1`: one CPU for every hub in the benchmark.
 * - `worker_connections` / `worker_rlimit_nofile` N + 1000: the default 768 connections per worker
 *   would refuse most of N subscribers.
 * - `access_log off`, `error_log … warn`: one log line per request would be measured with the rest.
 * - `nchan_message_buffer_length 1`: the benchmark never resumes, so one stored message is enough.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { descendantsOf, treeCpuSecondsOf, treeRssBytesOf } from '../harness/proc.ts';
import { waitForPort } from '../harness/spawn-pinned.ts';

export const NCHAN_MODULE = '/usr/lib/nginx/modules/ngx_nchan_module.so';
export const NCHAN_SUBSCRIBE_PATH = '/sub';

export interface NchanHub {
  publish(body: string): Promise<void>;
  rssBytes(): number;
  cpuSeconds(): number;
  pids(): number[];
  stop(): Promise<void>;
}

/** The installed Nchan version (from the Debian package), or undefined when it is missing. */
export function nchanVersion(): string | undefined {
  if (!existsSync(NCHAN_MODULE)) return undefined;
  try {
    const status = readFileSync('/var/lib/dpkg/status', 'utf8');
    const m = /Package: libnginx-mod-nchan\n(?:.+\n)*?Version: (\S+)/.exec(status);
    // 1:1.3.6+dfsg-2 → 1.3.6
    return m?.[1]?.replace(/^\d+:/, '').replace(/[+-].*$/, '') ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

export function nchanConfig(dir: string, port: number, maxConnections: number): string {
  return `load_module ${NCHAN_MODULE};
worker_processes 1;
worker_rlimit_nofile ${maxConnections + 100};
daemon off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections ${maxConnections}; }
http {
  access_log off;
  client_body_temp_path ${join(dir, 'body')};
  proxy_temp_path ${join(dir, 'proxy')};
  fastcgi_temp_path ${join(dir, 'fastcgi')};
  uwsgi_temp_path ${join(dir, 'uwsgi')};
  scgi_temp_path ${join(dir, 'scgi')};
  server {
    listen 127.0.0.1:${port};
    location = ${NCHAN_SUBSCRIBE_PATH} {
      nchan_subscriber eventsource;
      nchan_channel_id bench;
      nchan_eventsource_event bench;
    }
    location = /pub {
      nchan_publisher;
      nchan_channel_id bench;
      nchan_message_buffer_length 1;
    }
  }
}
`;
}

export async function startNchan(opts: {
  port: number;
  cpu: number;
  maxConnections: number;
}): Promise<NchanHub> {
  const dir = mkdtempSync(join(tmpdir(), 'nchan-bench-'));
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, nchanConfig(dir, opts.port, opts.maxConnections));
  // -e: the error log before the config is read (the packaged default is under /var/log).
  const master = spawn(
    'taskset',
    ['-c', String(opts.cpu), 'nginx', '-p', dir, '-e', join(dir, 'error.log'), '-c', conf],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  try {
    await waitForPort(opts.port, master, 'nginx (nchan)');
  } catch (err) {
    await stopMaster(master);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const pid = master.pid!;
  return {
    publish: (body) => publish(opts.port, body),
    rssBytes: () => treeRssBytesOf(pid),
    cpuSeconds: () => treeCpuSecondsOf(pid),
    pids: () => [pid, ...descendantsOf(pid)],
    async stop() {
      await stopMaster(master);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function publish(port: number, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/pub',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        const ok = res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300;
        res.on('end', () => (ok ? resolve() : reject(new Error(`nchan publish: ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** SIGTERM (nginx's fast shutdown) to the master by PID; SIGKILL to it and its worker after 10 s. */
async function stopMaster(master: ChildProcess): Promise<void> {
  if (master.exitCode !== null || master.signalCode !== null) return;
  const workers = descendantsOf(master.pid!);
  const exited = once(master, 'exit');
  master.kill('SIGTERM');
  const timer = setTimeout(() => {
    master.kill('SIGKILL');
    for (const w of workers) {
      try {
        process.kill(w, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  }, 10_000);
  await exited;
  clearTimeout(timer);
}
