// Throwaway: every node grouped once by (label, its first strong retainer's label.edge); JSON out.
import { readFileSync, writeFileSync } from 'node:fs';
const [file, out] = process.argv.slice(2);
const s = JSON.parse(readFileSync(file, 'utf8'));
const m = s.snapshot.meta, nf = m.node_fields.length, ef = m.edge_fields.length;
const ntypes = m.node_types[0], etypes = m.edge_types[0];
const N = s.nodes, E = s.edges, S = s.strings;
const ti = m.node_fields.indexOf('type'), ni = m.node_fields.indexOf('name'), si = m.node_fields.indexOf('self_size'), eci = m.node_fields.indexOf('edge_count');
const eti = m.edge_fields.indexOf('type'), eni = m.edge_fields.indexOf('name_or_index'), eto = m.edge_fields.indexOf('to_node');
const label = (i) => { const t = ntypes[N[i + ti]]; let n = S[N[i + ni]]; if (t.includes('string')) n = JSON.stringify(n.slice(0, 24)); return `${t}|${n.slice(0, 50)}`; };
const retainer = new Map();
let e = 0;
for (let i = 0; i < N.length; i += nf) {
  const ec = N[i + eci];
  const fl = label(i);
  const skip = fl.startsWith('object shape|') || fl.startsWith('synthetic|') || fl.startsWith('hidden|system / Map');
  for (let k = 0; k < ec; k++, e += ef) {
    if (skip) continue;
    const to = E[e + eto];
    const et = etypes[E[e + eti]];
    if (et === 'weak' || et === 'shortcut') continue;
    if (retainer.has(to)) continue;
    const en = et === 'element' || et === 'hidden' ? `[${et}]` : S[E[e + eni]];
    retainer.set(to, `${fl}.${en}`);
  }
}
const groups = new Map();
for (let i = 0; i < N.length; i += nf) {
  const key = `${label(i)}  <=  ${retainer.get(i) ?? '(none)'}`;
  const g = groups.get(key) ?? [0, 0]; g[0]++; g[1] += N[i + si]; groups.set(key, g);
}
writeFileSync(out, JSON.stringify([...groups]));
