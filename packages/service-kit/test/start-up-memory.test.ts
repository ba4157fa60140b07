/**
 * collectStartUpGarbage: one memory-reducing GC that hands back what start-up grew. Run in a child
 * process started as a push hub is (`--max-semi-space-size=8`), whose young generation a burst of
 * surviving allocations has grown the way loading a service's modules does.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { it } from 'node:test';

const module = fileURLToPath(new URL('../src/start-up-memory.ts', import.meta.url));
const mib = 1024 * 1024;

const script = `
import { getHeapSpaceStatistics } from 'node:v8';
import { runInNewContext } from 'node:vm';
const { collectStartUpGarbage } = await import(${JSON.stringify(module)});
const youngSize = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
// Objects that live a while, allocated in a burst: each scavenge finds most of them alive and V8
// grows the young generation towards its maximum, as it does while a service loads its modules.
let kept = [];
for (let round = 0; round < 40; round++) {
  for (let i = 0; i < 20000; i++) kept.push({ round, i, text: 'x'.repeat(8) + i });
  if (kept.length > 200000) kept = kept.slice(100000);
}
kept = undefined;
const grown = youngSize();
collectStartUpGarbage();
console.log(JSON.stringify({ grown, after: youngSize(), gcInNewContext: runInNewContext('typeof gc'), gcHere: typeof globalThis.gc }));
`;

it('shrinks the young generation start-up grew to its minimum, and leaves no gc function behind', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [
    '--max-semi-space-size=8',
    '--input-type=module',
    '-e',
    script,
  ]);
  const r = JSON.parse(stdout) as { grown: number; after: number; gcInNewContext: string; gcHere: string };
  assert.ok(r.grown >= 8 * mib, `the burst grew the young generation (${r.grown} bytes)`);
  assert.ok(r.after <= 2 * mib, `young generation after: ${r.after} bytes`);
  assert.equal(r.gcInNewContext, 'undefined');
  assert.equal(r.gcHere, 'undefined');
});
