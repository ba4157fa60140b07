import { readFileSync } from 'node:fs';
const s = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const m = s.snapshot.meta, nf = m.node_fields.length, ef = m.edge_fields.length;
const ntypes = m.node_types[0], etypes = m.edge_types[0];
const N = s.nodes, E = s.edges, S = s.strings;
const ti = 0, ni = 1, si = m.node_fields.indexOf('self_size'), eci = m.node_fields.indexOf('edge_count');
const eto = m.edge_fields.indexOf('to_node'), eni = m.edge_fields.indexOf('name_or_index'), eti = m.edge_fields.indexOf('type');
const label = (i) => `${ntypes[N[i + ti]]}|${S[N[i + ni]].slice(0, 40)}`;
const firstEdge = new Array(N.length / nf); let e = 0;
for (let i = 0, o = 0; i < N.length; i += nf, o++) { firstEdge[o] = e; e += N[i + eci] * ef; }
const parents = new Map();
for (let i = 0, o = 0; i < N.length; i += nf, o++) {
  for (let k = 0, x = firstEdge[o]; k < N[i + eci]; k++, x += ef) {
    const to = E[x + eto]; const et = etypes[E[x + eti]];
    if (et === 'weak') continue;
    const name = et === 'element' || et === 'hidden' ? `[${E[x + eni]}]` : S[E[x + eni]];
    if (!parents.has(to)) parents.set(to, []);
    parents.get(to).push(`${label(i)}.${name}`);
  }
}
for (let i = 0, o = 0; i < N.length; i += nf, o++) {
  const l = label(i);
  if (!(l === 'object|Map' || l === 'object|Set' || l === 'object|WeakMap' || l === 'object|WeakSet')) continue;
  let table = 0;
  for (let k = 0, x = firstEdge[o]; k < N[i + eci]; k++, x += ef) if (S[E[x + eni]] === 'table') table = N[E[x + eto] + si];
  if (table < 50000) continue;
  const p = (parents.get(i) ?? []).slice(0, 3);
  const gp = p.length ? (parents.get(E.length) ?? []) : [];
  console.log(`${l} table ${table} B  <= ${p.join(' | ')}`);
}
