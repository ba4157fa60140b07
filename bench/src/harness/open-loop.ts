/**
 * Latency at a fixed offered rate (performance-anchors §6.1 rule 3), with no coordinated omission:
 * request i is due at start + i/rate whatever happened to earlier ones, and its latency is counted
 * from that due time, so a stall shows up in the percentiles instead of slowing the load down.
 * No wrk2, hey or autocannon is installed here, so this is a small Node client: `runOpenLoop`
 * starts it as its own process pinned to the load CPU (cpu1) and reads its JSON summary.
 *
 * As a script: `node open-loop.ts '<json options>'` prints `{ count, errors, p50, p99, max }` (ms).
 */
import { execFile } from 'node:child_process';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { percentile } from './stats.ts';

export interface OpenLoopOptions {
  url: string;
  /** Requests per second. */
  rate: number;
  seconds: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Load CPU (default 1). */
  cpu?: number;
}

export interface OpenLoopResult {
  count: number;
  /** Non-2xx answers and socket errors. */
  errors: number;
  p50: number;
  p99: number;
  max: number;
}

const self = fileURLToPath(import.meta.url);
const run = promisify(execFile);

export async function runOpenLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const { stdout } = await run(
    'taskset',
    ['-c', String(options.cpu ?? 1), process.execPath, self, JSON.stringify(options)],
    { timeout: (options.seconds + 30) * 1000 },
  );
  return JSON.parse(stdout) as OpenLoopResult;
}

async function main(options: OpenLoopOptions): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 512 });
  const total = Math.round(options.rate * options.seconds);
  const interval = 1000 / options.rate;
  const latencies: number[] = [];
  let errors = 0;
  let finished = 0;
  const url = new URL(options.url);
  const body = options.body === undefined ? undefined : Buffer.from(options.body);
  const headers = { ...options.headers, ...(body && { 'content-length': String(body.length) }) };
  let done!: () => void;
  const allDone = new Promise<void>((r) => (done = r));
  const fire = (due: number) => {
    const req = request(url, { method: options.method ?? 'GET', headers, agent }, (res) => {
      res.resume();
      res.on('end', () => {
        if ((res.statusCode ?? 0) >= 300) errors++;
        latencies.push(performance.now() - due);
        if (++finished === total) done();
      });
    });
    req.on('error', () => {
      errors++;
      if (++finished === total) done();
    });
    req.end(body);
  };
  const start = performance.now() + 50;
  let sent = 0;
  while (sent < total) {
    const now = performance.now();
    while (sent < total && start + sent * interval <= now) {
      fire(start + sent * interval);
      sent++;
    }
    await new Promise((r) => setImmediate(r));
  }
  await allDone;
  agent.destroy();
  const result: OpenLoopResult = {
    count: latencies.length,
    errors,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: Math.max(...latencies),
  };
  process.stdout.write(JSON.stringify(result));
}

if (process.argv[1] === self) await main(JSON.parse(process.argv[2]!) as OpenLoopOptions);
