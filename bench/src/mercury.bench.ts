/**
 * Gatehouse's REST engine and Mercury 4.11.10 (the Java framework its REST automation and Event
 * Script specs come from) side by side in one run (issue 25, part 1): the same rest.yaml, the same
 * flow files and the same function work on both sides (bench/src/mercury/config.ts), tracing off.
 *
 * Blocks: the main configuration on one CPU (every row), the same on two CPUs (echo and flow), and
 * a 200-endpoint rest.yaml on one CPU. In a block both servers are started under `taskset` on the
 * block's CPUs and only one is loaded at a time: the rounds take turns row by row, so a change in
 * what else runs on the box falls on both alike. Each is warmed up in rounds of every row (3 s each)
 * until a round's total rate improves by less than 3 % on the one before (at least 3 rounds: the JVM
 * compiles its hot paths during the first), then measured: 3 rounds of every row, 5 s each, wrk
 * `-t1 -c50` pinned to cpu1. Server CPU per request from /proc (all threads: JIT and GC included),
 * RSS idle (2 s after it listens) and the most seen under load (sampled every second).
 *
 * Mercury is built by tools/mercury.sh (skipped with one line when no Java 21+ is found; its settings:
 * `tools/mercury.sh --help`); MERCURY_LOG=1 shows Mercury's own log.
 * Run: `node bench/src/mercury.bench.ts [--json <file>] [--rounds k] [--blocks main-1,main-2,routes-1]
 * [--rows relay,static] [--base <checkout>] [--cpu-prof]`: `--rows` keeps only the named rows of each
 * block (a block left without rows is skipped); `--base` runs a third server, the REST engine of
 * another checkout (e.g. a `git worktree` of the commit before a change), in the same turns, so
 * before and after are side by side under the same load; `--cpu-prof` writes this checkout's
 * engine's CPU profile to a temp dir, printed at the end.
 */
import './harness/help.ts'; // first: --help prints the comment above and exits before anything runs
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { boxLine, loadAverage, median, runWrk, type WrkResult } from './harness/index.ts';
import { type BenchConfig, mainConfig, type Row, routesConfig, uploadRequest } from './mercury/config.ts';
import type { MercuryJson, ServerResult } from './mercury/results.ts';
import { mercuryHeap, type Server, startGatehouse, startMercury } from './mercury/servers.ts';

const arg = (name: string) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const rounds = Number(arg('--rounds') ?? 3);
const rowsWanted = arg('--rows')?.split(',');
const baseCheckout = arg('--base') === undefined ? undefined : resolve(arg('--base')!);
const profileDir = process.argv.includes('--cpu-prof')
  ? mkdtempSync(join(tmpdir(), 'mercury-bench-prof-'))
  : undefined;
const seconds = 5;
const warmRowSeconds = 3;
const minWarmRounds = 3;
const maxWarmRounds = 15;
const plateau = 0.03;
const ports = { gatehouse: 24151, mercury: 24161, base: 24171 };
const relayPort = 24159;
const loadCpu = 1;
const mib = 2 ** 20;

function mercuryBuild(): { bin: string; jar: string } | undefined {
  const script = fileURLToPath(new URL('../../tools/mercury.sh', import.meta.url));
  const out = execFileSync(script, ['path'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  if (!out) return undefined;
  const [bin, jar] = out.split('\t') as [string, string];
  return { bin, jar };
}

/** The relay row's target: a bare node:http answer, on the load CPU with wrk (the same for both). */
async function relayTarget() {
  const body = JSON.stringify({ relayed: true });
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  server.listen(relayPort, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return server;
}

async function checkRow(base: string, row: Row): Promise<void> {
  const upload = row.script ? uploadRequest() : undefined;
  const res = await fetch(`${base}${row.path}`, {
    ...(upload && { method: 'POST', body: upload.body, headers: { 'content-type': upload.contentType } }),
  });
  row.check(res.status, await res.text());
}

async function wrkRow(
  server: Server,
  row: Row,
  secs: number,
): Promise<{ r: WrkResult; cpuUs: number; rss: number }> {
  let rss = server.rssBytes();
  const sampler = setInterval(() => {
    rss = Math.max(rss, server.rssBytes());
  }, 1000);
  const cpuBefore = server.cpuSeconds();
  try {
    const r = await runWrk({
      url: `http://127.0.0.1:${server.port}${row.path}`,
      seconds: secs,
      cpu: loadCpu,
      ...(row.script && { script: row.script }),
    });
    const cpuUs = ((server.cpuSeconds() - cpuBefore) / Math.max(1, r.requests)) * 1e6;
    return { r, cpuUs, rss: Math.max(rss, server.rssBytes()) };
  } finally {
    clearInterval(sampler);
  }
}

async function warmUp(server: Server, rows: Row[]): Promise<number[]> {
  const totals: number[] = [];
  for (let k = 0; k < maxWarmRounds; k++) {
    let total = 0;
    for (const row of rows) total += (await wrkRow(server, row, warmRowSeconds)).r.requestsPerSecond;
    totals.push(total);
    const gain = k > 0 ? total / totals[k - 1]! - 1 : Number.POSITIVE_INFINITY;
    console.log(
      `  warm-up ${k + 1}: ${total.toFixed(0)} req/s over ${rows.length} row(s) (${Number.isFinite(gain) ? `${(gain * 100).toFixed(1)} %` : 'first'})`,
    );
    if (k + 1 >= minWarmRounds && gain < plateau) break;
  }
  return totals;
}

/** Idle RSS, the answer of every row, then the warm-up. */
async function prepare(server: Server, rows: Row[]): Promise<ServerResult> {
  const loadStart = loadAverage();
  await new Promise((r) => setTimeout(r, 2000));
  const idleRss = server.rssBytes();
  const base = `http://127.0.0.1:${server.port}`;
  for (const row of rows) await checkRow(base, row);
  console.log(`  ${server.name}: RSS idle ${(idleRss / mib).toFixed(0)} MiB; warming up`);
  const warmup = await warmUp(server, rows);
  const result: ServerResult = {
    load: [loadStart, 0],
    idleRssMiB: idleRss / mib,
    loadRssMiB: 0,
    warmup,
    rows: {},
  };
  for (const row of rows) result.rows[row.id] = { rps: [], cpuUs: [], p99: [], errors: 0 };
  return result;
}

async function measure(server: Server, result: ServerResult, row: Row, round: number): Promise<void> {
  const { r, cpuUs, rss } = await wrkRow(server, row, seconds);
  const out = result.rows[row.id]!;
  out.rps.push(r.requestsPerSecond);
  out.cpuUs.push(cpuUs);
  out.p99.push(r.p99);
  out.errors += r.errors;
  result.loadRssMiB = Math.max(result.loadRssMiB, rss / mib);
  console.log(
    `  round ${round} ${row.id.padEnd(14)} ${server.name.padEnd(9)} ${r.requestsPerSecond.toFixed(0).padStart(7)} req/s  ${cpuUs.toFixed(1).padStart(6)} µs CPU/req  p99 ${r.p99.toFixed(2)} ms  load ${loadAverage().toFixed(1)}${r.errors ? `  ${r.errors} errors` : ''}`,
  );
}

function printBlock(block: MercuryJson['blocks'][number]): void {
  const g = block.servers.gatehouse;
  const m = block.servers.mercury;
  console.log(
    `\n${block.id} (${block.cores} CPU${block.cores > 1 ? 's' : ''}), medians of ${rounds} rounds:`,
  );
  for (const row of block.rows) {
    const side = (s: ServerResult | undefined) => {
      const x = s?.rows[row.id];
      return x
        ? `${median(x.rps).toFixed(0)} req/s ${median(x.cpuUs).toFixed(1)} µs p99 ${median(x.p99).toFixed(2)} ms`
        : '–';
    };
    const ratio = g && m ? median(g.rows[row.id]!.rps) / median(m.rows[row.id]!.rps) : Number.NaN;
    // By CPU: Mercury's (or the base's) CPU per request over Gatehouse's, the steadier figure.
    const byCpu = (s: ServerResult | undefined) =>
      g && s ? (median(s.rows[row.id]!.cpuUs) / median(g.rows[row.id]!.cpuUs)).toFixed(2) : '–';
    const b = block.servers['gatehouse-base'];
    console.log(
      `  ${row.id.padEnd(14)} gatehouse ${side(g)} | mercury ${side(m)} | ${ratio.toFixed(2)}× req/s, ${byCpu(m)}× by CPU${b ? ` | base ${side(b)} | ${byCpu(b)}× base's CPU` : ''}`,
    );
  }
  for (const [name, s] of Object.entries(block.servers) as Array<[string, ServerResult]>)
    console.log(
      `  ${name}: RSS idle ${s.idleRssMiB.toFixed(0)} MiB, under load ${s.loadRssMiB.toFixed(0)} MiB, load average ${s.load[0].toFixed(2)} → ${s.load[1].toFixed(2)}`,
    );
}

async function main(): Promise<void> {
  const loadStart = loadAverage();
  console.log(`Mercury side by side — ${boxLine()}, load average ${loadStart.toFixed(2)}`);
  const java = mercuryBuild();
  if (!java) {
    console.log('mercury: skipped (see the line above); nothing to compare');
    return;
  }
  // `java -version` writes to stderr.
  const javaVersion = spawnSync(java.bin, ['-version'], { encoding: 'utf8' }).stderr;
  const relay = await relayTarget();
  const main1 = mainConfig(relayPort);
  const routes = routesConfig();
  const wanted = (arg('--blocks') ?? 'main-1,main-2,routes-1').split(',');
  const plans: Array<{ id: string; config: BenchConfig; cpus: string; rows: Row[] }> = [
    { id: 'main-1', config: main1, cpus: '0', rows: main1.rows },
    {
      id: 'main-2',
      config: main1,
      cpus: '0-1',
      rows: main1.rows.filter((r) => r.id === 'echo' || r.id === 'flow'),
    },
    { id: 'routes-1', config: routes, cpus: '0', rows: routes.rows },
  ];
  const json: MercuryJson = {
    box: boxLine(),
    java: javaVersion.split('\n')[0] ?? '',
    load: [loadStart, 0],
    rounds,
    blocks: [],
  };
  try {
    for (const plan of plans.filter((p) => wanted.includes(p.id))) {
      if (rowsWanted) plan.rows = plan.rows.filter((r) => rowsWanted.includes(r.id));
      if (plan.rows.length === 0) continue;
      const block: MercuryJson['blocks'][number] = {
        id: plan.id,
        cores: plan.cpus.includes('-') ? 2 : 1,
        rows: plan.rows.map((r) => ({ id: r.id, what: r.what })),
        servers: {},
      };
      console.log(
        `\n${plan.id}: both servers on cpu ${plan.cpus} (Mercury ${mercuryHeap}), wrk on cpu ${loadCpu}`,
      );
      const servers: Server[] = [];
      try {
        servers.push(
          await startGatehouse(plan.config, ports.gatehouse, plan.cpus, {
            ...(profileDir && { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${join(profileDir, plan.id)}`] }),
          }),
        );
        if (baseCheckout)
          servers.push(await startGatehouse(plan.config, ports.base, plan.cpus, { checkout: baseCheckout }));
        servers.push(await startMercury(plan.config, ports.mercury, plan.cpus, java));
        const results = new Map<Server, ServerResult>();
        for (const server of servers) results.set(server, await prepare(server, plan.rows));
        // Rounds take turns (row by row, one server loaded at a time) so that a change in what
        // else runs on the box falls on both sides alike.
        for (let round = 1; round <= rounds; round++)
          for (const row of plan.rows)
            for (const server of servers) await measure(server, results.get(server)!, row, round);
        for (const [server, result] of results) {
          result.load[1] = loadAverage();
          block.servers[server.name] = result;
        }
      } finally {
        for (const server of servers) await server.stop();
      }
      json.blocks.push(block);
      printBlock(block);
    }
  } finally {
    relay.close();
    rmSync(main1.dir, { recursive: true, force: true });
    rmSync(routes.dir, { recursive: true, force: true });
  }
  json.load[1] = loadAverage();
  console.log(`\nload average ${json.load[0].toFixed(2)} at start, ${json.load[1].toFixed(2)} at end`);
  const out = arg('--json');
  if (out) writeFileSync(out, JSON.stringify(json, null, 2));
  if (profileDir) console.log(`CPU profiles of this checkout's engine: ${profileDir}`);
}

await main();
