import { readFileSync } from 'node:fs';
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
for (const f of process.argv.slice(2)) {
  const t = readFileSync(f, 'utf8');
  const load = /load average ([0-9.]+)/.exec(t)?.[1];
  const rows = { kafka: [], memory: [], 'B-sse': [] }, red = { kafka: [], memory: [], 'B-sse': [] }, heap = { kafka: [], 'B-sse': [] };
  for (const m of t.matchAll(/^  (kafka|memory|B-sse): idle (\d+) MiB.*after a forced GC (\d+) MiB \(heap (\d+).*after a memory-reducing GC (\d+) MiB; ([0-9.]+) KiB per connection/gm)) {
    rows[m[1]].push(Number(m[6]));
    red[m[1]].push(((Number(m[5]) - Number(m[2])) * 1024) / 14286);
  }
  const k = med(rows.kafka), b = med(rows['B-sse']), rk = med(red.kafka), rb = med(red['B-sse']);
  console.log(`${f.split('/').pop()} (load ${load}): kafka ${rows.kafka.join('/')} → ${k}; memory ${rows.memory.join('/')} → ${med(rows.memory)}; B-sse ${rows['B-sse'].join('/')} → ${b}; ratio ${(k / b).toFixed(2)}; after memory-reducing GC kafka ${rk.toFixed(2)} B-sse ${rb.toFixed(2)} ratio ${(rk / rb).toFixed(2)}`);
}
