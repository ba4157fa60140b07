// Throwaway: group heap snapshot nodes by type/name, diff two snapshots, per connection.
import { readFileSync } from 'node:fs';
function load(file) {
  const s = JSON.parse(readFileSync(file, 'utf8'));
  const m = s.snapshot.meta, nf = m.node_fields.length, types = m.node_types[0];
  const ti = m.node_fields.indexOf('type'), ni = m.node_fields.indexOf('name'), si = m.node_fields.indexOf('self_size');
  const groups = new Map();
  const n = s.nodes;
  for (let i = 0; i < n.length; i += nf) {
    const type = types[n[i + ti]];
    let name = s.strings[n[i + ni]];
    if (type === 'string' || type === 'concatenated string' || type === 'sliced string') name = name.length > 40 ? name.slice(0, 40) + '…' : name;
    if (type === 'code' || type === 'closure' ) name = name.slice(0, 60);
    if (type === 'array' || type === 'hidden' || type === 'object shape') name = name.slice(0, 60);
    const key = `${type}|${name}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { count: 0, size: 0 }));
    g.count++; g.size += n[i + si];
  }
  return groups;
}
const [a, b, dn, min] = [process.argv[2], process.argv[3], Number(process.argv[4]), Number(process.argv[5] ?? 20)];
const ga = load(a), gb = load(b);
const rows = [];
for (const [k, v] of gb) {
  const u = ga.get(k) ?? { count: 0, size: 0 };
  rows.push([k, (v.count - u.count) / dn, (v.size - u.size) / dn]);
}
for (const [k, u] of ga) if (!gb.has(k)) rows.push([k, -u.count / dn, -u.size / dn]);
rows.sort((x, y) => y[2] - x[2]);
let total = 0;
for (const r of rows) total += r[2];
console.log(`total self size per connection: ${total.toFixed(0)}`);
for (const r of rows) if (Math.abs(r[2]) >= min) console.log(`${r[2].toFixed(1).padStart(8)} B  ${r[1].toFixed(2).padStart(6)} /conn  ${r[0]}`);
