/** Runs wrk (Debian package) pinned to a CPU (load on cpu1, §6.1 rule 2) and parses its figures. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface WrkResult {
  requestsPerSecond: number;
  /** Requests completed in the run. */
  requests: number;
  /** Latency percentiles in milliseconds. */
  p50: number;
  p99: number;
  /** Non-2xx/3xx answers plus socket errors. */
  errors: number;
}

export interface WrkOptions {
  url: string;
  seconds?: number;
  connections?: number;
  cpu?: number;
  /** A Lua script (method, headers, body). */
  script?: string;
}

export async function runWrk(o: WrkOptions): Promise<WrkResult> {
  const seconds = o.seconds ?? 5;
  const args = [
    '-c',
    String(o.cpu ?? 1),
    'wrk',
    '-t1',
    `-c${o.connections ?? 50}`,
    `-d${seconds}s`,
    '--latency',
  ];
  if (o.script) args.push('-s', o.script);
  args.push(o.url);
  const { stdout } = await run('taskset', args, { timeout: (seconds + 30) * 1000 });
  return parseWrk(stdout);
}

export function parseWrk(out: string): WrkResult {
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
  const total = /(\d+) requests in/.exec(out);
  if (!rps || !total) throw new Error(`cannot read wrk output:\n${out}`);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const socketErrors = socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  return {
    requestsPerSecond: Number(rps[1]),
    requests: Number(total[1]),
    p50: latencyMs(out, '50'),
    p99: latencyMs(out, '99'),
    errors: Number(non2xx?.[1] ?? 0) + socketErrors,
  };
}

function latencyMs(out: string, percent: string): number {
  const m = new RegExp(`\\s${percent}%\\s+([\\d.]+)(us|ms|s)\\b`).exec(out);
  if (!m) return Number.NaN;
  const v = Number(m[1]);
  return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
}
