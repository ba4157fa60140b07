/**
 * Centrifugo v6 (built by tools/bench-peers.sh from the Go module proxy) as a side-by-side SSE hub:
 * a config in a temp dir with the unidirectional SSE transport (`uni_sse`), anonymous insecure
 * clients that name their channel in the connect request (`cf_connect={"subs":{"bench":{}}}`), the
 * HTTP API for publishing (`POST /api/publish`) and the pprof debug endpoint, through which the
 * benchmark forces a GC before reading memory (`/debug/pprof/heap?gc=1`). One OS thread of Go code
 * (`GOMAXPROCS=1`), the process pinned to the server CPU, stopped by its PID.
 *
 * Settings that differ from defaults, and why:
 * - `client.insecure` and `http_api.insecure`: no tokens or API key, as no other hub here checks one.
 * - `client.allowed_origins ["*"]`: the benchmark client sends no Origin; harmless either way.
 * - `log.level error`: it warns at start about the insecure modes chosen here, on purpose.
 * - no history or recovery on the channel (the default): the others keep at most one message.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuNanosOf, rssBytesOf } from '../harness/proc.ts';
import { waitForPort } from '../harness/spawn-pinned.ts';

export const CENTRIFUGO_BIN = fileURLToPath(
  new URL('../../../.cache/centrifugo/bin/centrifugo', import.meta.url),
);
export const CENTRIFUGO_SSE_PATH = `/connection/uni_sse?cf_connect=${encodeURIComponent(JSON.stringify({ subs: { bench: {} } }))}`;

export interface CentrifugoHub {
  publish(eventJson: string): Promise<void>;
  /** Forces a Go GC (pprof heap endpoint with gc=1); returns HeapAlloc after it, in bytes. */
  gc(): Promise<number>;
  rssBytes(): number;
  cpuSeconds(): number;
  pid: number;
  stop(): Promise<void>;
}

/** The built Centrifugo's version, or undefined when tools/bench-peers.sh has not built it. */
export function centrifugoVersion(): string | undefined {
  if (!existsSync(CENTRIFUGO_BIN)) return undefined;
  try {
    const out = execFileSync(CENTRIFUGO_BIN, ['version'], { encoding: 'utf8' });
    return /(\d+\.\d+\.\d+)/.exec(out)?.[1] ?? out.trim();
  } catch {
    return undefined;
  }
}

export function centrifugoConfig(port: number): object {
  return {
    log: { level: 'error' },
    http_server: { address: '127.0.0.1', port: String(port) },
    client: { insecure: true, allowed_origins: ['*'] },
    uni_sse: { enabled: true },
    http_api: { insecure: true },
    debug: { enabled: true },
  };
}

export async function startCentrifugo(opts: { port: number; cpu: number }): Promise<CentrifugoHub> {
  const dir = mkdtempSync(join(tmpdir(), 'centrifugo-bench-'));
  const conf = join(dir, 'config.json');
  writeFileSync(conf, JSON.stringify(centrifugoConfig(opts.port), null, 2));
  const child = spawn('taskset', ['-c', String(opts.cpu), CENTRIFUGO_BIN, '--config', conf], {
    cwd: dir,
    env: { ...process.env, GOMAXPROCS: '1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    await waitForPort(opts.port, child, 'centrifugo');
  } catch (err) {
    await stop(child);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const pid = child.pid!;
  return {
    pid,
    publish: async (eventJson) => {
      const body = `{"channel":"bench","data":${eventJson}}`;
      const { status, text } = await httpRequest(opts.port, 'POST', '/api/publish', body);
      if (status !== 200 || text.includes('"error"'))
        throw new Error(`centrifugo publish: ${status} ${text}`);
    },
    async gc() {
      const { status, text } = await httpRequest(opts.port, 'GET', '/debug/pprof/heap?gc=1&debug=1');
      if (status !== 200) throw new Error(`centrifugo pprof heap: ${status}`);
      const m = /# HeapAlloc = (\d+)/.exec(text);
      if (!m) throw new Error('centrifugo pprof heap: no HeapAlloc line');
      return Number(m[1]);
    },
    rssBytes: () => rssBytesOf(pid),
    cpuSeconds: () => cpuNanosOf(pid) / 1e9,
    async stop() {
      await stop(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function httpRequest(
  port: number,
  method: string,
  path: string,
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers:
          body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** SIGTERM by PID (Centrifugo closes its connections and exits); SIGKILL after 10 s. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
