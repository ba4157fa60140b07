/**
 * REST engine benchmarks (performance-anchors.md §6.1, §6.3 a):
 * - R1: `GET /api/hello/world` from the example app (a function returning small JSON) against a
 *   bare node:http hello world; goal ≥ 0.80×.
 * - R2: the same function behind a generated 200-endpoint rest.yaml, hitting a route with two path
 *   variables and a query; goal ≥ 0.90× of R1.
 * - R5: a soak of 1M requests against R1's engine; heap after GC sampled every ~100k requests;
 *   goal: growth ≤ 20 MiB, and the second half flat (≤ 2 MiB) so that it is not still growing.
 *
 * Every server is its own process pinned to cpu0, wrk runs pinned to cpu1 (`-t1 -c50`). After a 3 s
 * warm-up of each, the three are measured interleaved (bare, R1, R2) 5 times for 5 s; medians and
 * ratios of medians are printed with min/max and server CPU time per request. Bounded: about
 * 2 minutes plus the soak (slices until 1M requests, at most 240 s).
 *
 * Run: `node bench/src/rest-engine.bench.ts` (`--no-soak` skips R5).
 */
import './harness/help.ts'; // first: --help prints the comment above and exits before anything runs
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  boxLine,
  formatRatio,
  median,
  type PinnedProcess,
  ratio,
  runWrk,
  spawnPinned,
} from './harness/index.ts';

const rounds = 5;
const seconds = 5;
const warmupSeconds = 3;
const soakRequests = 1_000_000;
const soakSlices = 10;
const soakMaxSeconds = 240;
const mib = 1024 * 1024;

const root = fileURLToPath(new URL('../../', import.meta.url));
const engineMain = join(root, 'services/rest-engine/src/main.ts');
const bareServer = fileURLToPath(new URL('./baselines/bare-node-hello.ts', import.meta.url));
const exampleFunctions = join(root, 'examples/rest-app/functions');

interface Target {
  name: string;
  process: PinnedProcess;
  url: string;
  rps: number[];
  cpuPerRequestUs: number[];
  p99: number[];
}

/** A config folder whose rest.yaml has 200 endpoints with two path variables each. */
function twoHundredEndpoints(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rest-bench-'));
  const entries = Array.from(
    { length: 200 },
    (_, i) =>
      `  - { service: hello.world, methods: [GET], url: "/api/v1/resource${i}/{id}/items/{itemId}", timeout: 10s }`,
  );
  writeFileSync(join(dir, 'rest.yaml'), `rest:\n${entries.join('\n')}\n`);
  writeFileSync(join(dir, 'application.yml'), 'rest.automation: true\n');
  return dir;
}

function engineEnv(port: number, apiPort: number, extra: Record<string, string> = {}) {
  return {
    REST_SERVER_PORT: String(port),
    REST_SERVER_HOST: '127.0.0.1',
    API_PORT: String(apiPort),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    REST_CONFIG_FOLDER: join(root, 'examples/rest-app'),
    ...extra,
  };
}

async function measure(target: Target): Promise<void> {
  const cpuBefore = target.process.cpuSeconds();
  const result = await runWrk({ url: target.url, seconds });
  const cpu = target.process.cpuSeconds() - cpuBefore;
  if (result.errors > 0)
    console.log(
      `  ${target.name}: ${result.errors} socket errors or non-2xx answers (a loaded machine times out)`,
    );
  target.rps.push(result.requestsPerSecond);
  target.p99.push(result.p99);
  target.cpuPerRequestUs.push((cpu / result.requests) * 1e6);
  console.log(
    `  ${target.name.padEnd(6)} ${result.requestsPerSecond.toFixed(0).padStart(7)} rps  p50 ${result.p50.toFixed(2)} ms  p99 ${result.p99.toFixed(2)} ms`,
  );
}

function summary(t: Target): string {
  const min = Math.min(...t.rps).toFixed(0);
  const max = Math.max(...t.rps).toFixed(0);
  return `${t.name.padEnd(6)} median ${median(t.rps).toFixed(0).padStart(7)} rps (min ${min}, max ${max}), p99 ${median(t.p99).toFixed(2)} ms, server CPU ${median(t.cpuPerRequestUs).toFixed(1)} µs/request`;
}

async function soak(target: Target): Promise<void> {
  const rate = median(target.rps);
  const sliceSeconds = Math.max(2, Math.min(15, Math.ceil(soakRequests / soakSlices / rate)));
  console.log(
    `\nR5 soak: slices of ${sliceSeconds} s against ${target.name} until ${soakRequests} requests (at most ${soakMaxSeconds} s)`,
  );
  const heaps = [await target.process.heapAfterGc()];
  const started = Date.now();
  let requests = 0;
  while (requests < soakRequests && Date.now() - started < soakMaxSeconds * 1000) {
    const r = await runWrk({ url: target.url, seconds: sliceSeconds });
    if (r.errors > 0) console.log(`  ${r.errors} socket errors or non-2xx answers in this slice`);
    requests += r.requests;
    heaps.push(await target.process.heapAfterGc());
    console.log(
      `  after ${String(requests).padStart(8)} requests: heap after GC ${(heaps.at(-1)! / mib).toFixed(1)} MiB`,
    );
  }
  const growth = (heaps.at(-1)! - heaps[0]!) / mib;
  // A leak keeps growing; a warm heap settles. So the second half must be flat too (≤ 2 MiB).
  const lateGrowth = (heaps.at(-1)! - heaps[heaps.length >> 1]!) / mib;
  const verdict = growth <= 20 && lateGrowth <= 2 ? 'meets' : 'MISSES';
  console.log(
    `R5 ${requests} requests: heap after GC ${(heaps[0]! / mib).toFixed(1)} → ${(heaps.at(-1)! / mib).toFixed(1)} MiB, growth ${growth.toFixed(1)} MiB (second half ${lateGrowth.toFixed(1)} MiB) → ${verdict} the goal (≤ 20 MiB, not still growing)`,
  );
}

/** Every target must answer 200 with the hello body before its speed means anything. */
async function checkAnswer(url: string): Promise<void> {
  const res = await fetch(url);
  const body = await res.text();
  if (res.status !== 200 || JSON.parse(body).hello !== 'world') {
    throw new Error(`${url} answered ${res.status} ${body}`);
  }
}

async function main(): Promise<void> {
  const withSoak = !process.argv.includes('--no-soak');
  console.log(`REST engine benchmark — ${boxLine()}`);
  console.log(
    `servers pinned to cpu0, wrk -t1 -c50 pinned to cpu1, ${rounds} × ${seconds} s interleaved after ${warmupSeconds} s warm-up\n`,
  );
  const processes: PinnedProcess[] = [];
  try {
    const bare = await spawnPinned({
      name: 'bare',
      script: bareServer,
      port: 18801,
      cpu: 0,
      env: { PORT: '18801' },
    });
    processes.push(bare);
    const r1 = await spawnPinned({
      name: 'R1',
      script: engineMain,
      port: 18802,
      cpu: 0,
      env: engineEnv(18802, 18812),
      probe: true,
    });
    processes.push(r1);
    const r2 = await spawnPinned({
      name: 'R2',
      script: engineMain,
      port: 18803,
      cpu: 0,
      env: engineEnv(18803, 18813, {
        REST_CONFIG_FOLDER: twoHundredEndpoints(),
        FUNCTIONS_PATH: exampleFunctions,
      }),
    });
    processes.push(r2);
    const targets: Target[] = [
      { name: 'bare', process: bare, url: 'http://127.0.0.1:18801/', rps: [], cpuPerRequestUs: [], p99: [] },
      {
        name: 'R1',
        process: r1,
        url: 'http://127.0.0.1:18802/api/hello/world',
        rps: [],
        cpuPerRequestUs: [],
        p99: [],
      },
      {
        name: 'R2',
        process: r2,
        url: 'http://127.0.0.1:18803/api/v1/resource150/ABC-42/items/7?view=full&page=2',
        rps: [],
        cpuPerRequestUs: [],
        p99: [],
      },
    ];
    for (const t of targets) await checkAnswer(t.url);
    for (const t of targets) await runWrk({ url: t.url, seconds: warmupSeconds });
    for (let round = 1; round <= rounds; round++) {
      console.log(`round ${round}`);
      for (const t of targets) await measure(t);
    }
    const [b, one, two] = targets as [Target, Target, Target];
    console.log('');
    for (const t of targets) console.log(summary(t));
    const r1Ratio = ratio(median(one.rps), median(b.rps));
    const r2Ratio = ratio(median(two.rps), median(one.rps));
    // Requests per CPU-second (anchors §6.1 rule 4): steadier than rps on a shared, noisy box.
    const r1Cpu = ratio(median(b.cpuPerRequestUs), median(one.cpuPerRequestUs));
    const r2Cpu = ratio(median(one.cpuPerRequestUs), median(two.cpuPerRequestUs));
    const verdict = (value: number, goal: number) => (value >= goal ? 'meets' : 'MISSES');
    console.log(
      `\nR1 engine / bare node:http = ${formatRatio(r1Ratio)} rps, ${formatRatio(r1Cpu)} per CPU-second (goal ≥ 0.80×) → ${verdict(r1Ratio, 0.8)}`,
    );
    console.log(
      `R2 200 endpoints / R1      = ${formatRatio(r2Ratio)} rps, ${formatRatio(r2Cpu)} per CPU-second (goal ≥ 0.90×) → ${verdict(r2Ratio, 0.9)}`,
    );
    if (withSoak) await soak(one);
  } finally {
    for (const p of processes) await p.stop();
  }
}

await main();
