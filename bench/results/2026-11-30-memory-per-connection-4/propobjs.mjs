// Throwaway: objects that have a PropertyArray (out-of-object properties), grouped by constructor + property names.
import { readFileSync } from 'node:fs';
const s = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const m = s.snapshot.meta, nf = m.node_fields.length, ef = m.edge_fields.length;
const ntypes = m.node_types[0], etypes = m.edge_types[0];
const N = s.nodes, E = s.edges, S = s.strings;
const si = m.node_fields.indexOf('self_size'), eci = m.node_fields.indexOf('edge_count');
const eto = m.edge_fields.indexOf('to_node'), eni = m.edge_fields.indexOf('name_or_index'), eti = m.edge_fields.indexOf('type');
const groups = new Map();
let e = 0;
for (let i = 0; i < N.length; i += nf) {
  const ec = N[i + eci];
  const type = ntypes[N[i]], name = S[N[i + 1]];
  let pa = -1; const props = [];
  for (let k = 0; k < ec; k++, e += ef) {
    const et = etypes[E[e + eti]], to = E[e + eto];
    if (et === 'property') props.push(S[E[e + eni]]);
    if (et === 'internal' && S[E[e + eni]] === 'properties' && S[N[to + 1]] === 'system / PropertyArray') pa = N[to + si];
  }
  if (type !== 'object' || pa < 0) continue;
  const key = `${name} {${props.join(',')}} PropertyArray ${pa} B`;
  groups.set(key, (groups.get(key) ?? 0) + 1);
}
for (const [k, n] of [...groups].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(n, k);
