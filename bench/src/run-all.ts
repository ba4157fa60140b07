/**
 * `make bench`: every benchmark one after the other (never two at once: they pin the same CPUs),
 * each in its own process so one that fails does not stop the rest, then the report
 * (report/write-report.ts): bench/results/<date>-<host>.md with every table and an SVG per
 * scenario, and bench/results/latest.md. About 50 minutes in all. The production build
 * (tools/build.ts) runs first: the Gatehouse hubs run built JavaScript, as the image does.
 *
 * Run: `node bench/src/run-all.ts [bench-file …] [-- extra args for each]`, e.g.
 * `node bench/src/run-all.ts push-hub.bench.ts bus-throughput.bench.ts`.
 */
import './harness/help.ts'; // first: --help prints the comment above and exits before anything runs
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildAll } from '../../tools/build.ts';
import { type BenchOutput, writeReport } from './report/write-report.ts';

const allBenches = [
  'bus-throughput.bench.ts',
  'jwt-verify.bench.ts',
  'blacklist-check.bench.ts',
  'rest-engine.bench.ts',
  'proxy.bench.ts',
  'push-hub.bench.ts',
  'connect-burst.bench.ts',
  'resume-warmup.bench.ts',
  'mercury.bench.ts',
  'memory-floor.bench.ts',
  'flows.bench.ts',
  'unwanted-events.bench.ts',
  'kafka-fetch.bench.ts',
  'interest-routing.bench.ts',
  'type-patterns.bench.ts',
  'client-bundles.bench.ts',
  'presence.bench.ts',
  'flow-adapter.bench.ts',
  'history.bench.ts',
  'ack-overhead.bench.ts',
  // S1 (RIG's 1M records at 10k and 40k clients), S2 (20,000 connections over 3 replicas with a
  // replica killed) and S3 (churn): about half an hour; the 100k run and S4 are its flags
  // (bench/README.md, "cluster-scale.bench.ts").
  'cluster-scale.bench.ts',
];
/** The benchmarks that write their results as JSON (`--json <file>`) for tables and plots. */
const withJson = new Set([
  'bus-throughput.bench.ts',
  'push-hub.bench.ts',
  'mercury.bench.ts',
  'flows.bench.ts',
]);

/** Runs one benchmark, its output shown as it comes and kept for the report. */
function run(file: string, args: string[]): Promise<{ status: number | null; text: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    const keep = (out: NodeJS.WriteStream) => (c: Buffer) => {
      out.write(c);
      chunks.push(c);
    };
    child.stdout.on('data', keep(process.stdout));
    child.stderr.on('data', keep(process.stderr));
    child.on('close', (status) => resolve({ status, text: Buffer.concat(chunks).toString() }));
  });
}

const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const named = dash >= 0 ? argv.slice(0, dash) : argv;
const extra = dash >= 0 ? argv.slice(dash + 1) : [];
const benches = named.length ? named : allBenches;
const resultsDir = fileURLToPath(new URL('../results/', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'bench-json-'));
mkdirSync(resultsDir, { recursive: true });

await buildAll();
const outputs: BenchOutput[] = [];
for (const bench of benches) {
  console.log(`\n=== ${bench}`);
  const file = fileURLToPath(new URL(`./${bench}`, import.meta.url));
  const json = join(scratch, `${bench}.json`);
  const started = performance.now();
  const { status, text } = await run(file, [...(withJson.has(bench) ? ['--json', json] : []), ...extra]);
  outputs.push({
    bench: bench.replace(/\.bench\.ts$/, ''),
    status,
    seconds: (performance.now() - started) / 1000,
    text,
    ...(existsSync(json) ? { json: JSON.parse(readFileSync(json, 'utf8')) } : {}),
  });
}
const report = await writeReport(resultsDir, outputs);
rmSync(scratch, { recursive: true, force: true });
const failed = outputs.filter((o) => o.status !== 0).map((o) => `${o.bench} (exit ${o.status})`);
console.log(`\nreport: ${report}`);
console.log(failed.length ? `failed: ${failed.join(', ')}` : 'all benchmarks ran');
process.exit(failed.length ? 1 : 0);
