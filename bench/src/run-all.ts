/**
 * `make bench`: every benchmark one after the other (never two at once: they pin the same CPUs),
 * each in its own process so one that fails does not stop the rest. About 30 minutes in all.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const benches = [
  'bus-throughput.bench.ts',
  'jwt-verify.bench.ts',
  'blacklist-check.bench.ts',
  'rest-engine.bench.ts',
  'proxy.bench.ts',
  'push-hub.bench.ts',
  'resume-warmup.bench.ts',
];

const failed: string[] = [];
for (const bench of benches) {
  console.log(`\n=== ${bench}`);
  const file = fileURLToPath(new URL(`./${bench}`, import.meta.url));
  const { status } = spawnSync(process.execPath, [file], { stdio: 'inherit' });
  if (status !== 0) failed.push(`${bench} (exit ${status})`);
}
console.log(failed.length ? `\nfailed: ${failed.join(', ')}` : '\nall benchmarks ran');
process.exit(failed.length ? 1 : 0);
