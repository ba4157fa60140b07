import { readFileSync } from 'node:fs';
const s = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const m = s.snapshot.meta, nf = m.node_fields.length, ef = m.edge_fields.length;
const ntypes = m.node_types[0], etypes = m.edge_types[0];
const N = s.nodes, E = s.edges, S = s.strings;
const si = m.node_fields.indexOf('self_size'), eci = m.node_fields.indexOf('edge_count');
const eto = m.edge_fields.indexOf('to_node'), eni = m.edge_fields.indexOf('name_or_index'), eti = m.edge_fields.indexOf('type');
const first = []; let e = 0;
for (let i = 0; i < N.length; i += nf) { first.push(e); e += N[i + eci] * ef; }
const label = (i) => `${ntypes[N[i]]}|${S[N[i + 1]].slice(0, 40)}`;
let shown = 0;
for (let i = 0, o = 0; i < N.length && shown < 3; i += nf, o++) {
  if (S[N[i + 1]] !== 'NoSniffResponse' || ntypes[N[i]] !== 'object') continue;
  for (let k = 0, x = first[o]; k < N[i + eci]; k++, x += ef) {
    const to = E[x + eto];
    if (S[N[to + 1]] === 'system / PropertyArray') {
      shown++;
      const po = to / nf; const out = [];
      for (let j = 0, y = first[po]; j < N[to + eci]; j++, y += ef) out.push(`${etypes[E[y + eti]]}:${E[y + eni]}->${label(E[y + eto])}`);
      console.log('PropertyArray', N[to + si], 'B:', out.join(', '));
    }
  }
}
