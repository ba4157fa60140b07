import { readFileSync } from 'node:fs';
const load = (f) => new Map(JSON.parse(readFileSync(f, 'utf8')));
const [p, dn] = [process.argv[2], Number(process.argv[3] ?? 4000)];
const [r4, r8, b4, b8] = [`replica-${p}-4000`, `replica-${p}-8000`, `bsse-${p}-4000`, `bsse-${p}-8000`].map((f) => load(`${f}.groups.json`));
const z = [0, 0];
const keys = new Set([...r8.keys(), ...b8.keys(), ...r4.keys(), ...b4.keys()]);
const rows = [];
let tr = 0, tb = 0;
for (const k of keys) {
  const rn = ((r8.get(k) ?? z)[0] - (r4.get(k) ?? z)[0]) / dn, rs = ((r8.get(k) ?? z)[1] - (r4.get(k) ?? z)[1]) / dn;
  const bn = ((b8.get(k) ?? z)[0] - (b4.get(k) ?? z)[0]) / dn, bs = ((b8.get(k) ?? z)[1] - (b4.get(k) ?? z)[1]) / dn;
  tr += rs; tb += bs;
  rows.push([rs - bs, rn, bn, rs, bs, k]);
}
console.log(`per connection: replica ${tr.toFixed(0)} B, B-sse ${tb.toFixed(0)} B, difference ${(tr - tb).toFixed(0)} B`);
rows.sort((a, b) => Math.abs(b[0]) - Math.abs(a[0]));
for (const [d, rn, bn, rs, bs, k] of rows) if (Math.abs(d) >= Number(process.env.MIN ?? 8)) console.log(`${d.toFixed(0).padStart(6)} B   replica ${rn.toFixed(2)} (${rs.toFixed(0)} B)   B-sse ${bn.toFixed(2)} (${bs.toFixed(0)} B)   ${k}`);
