/**
 * What type patterns cost to match (issue 37): H6's filter cost per subscriber per event, with the
 * subscribers on a pattern instead of a type, next to H6's own set-up in the same run, on the hub's
 * SubscriptionIndex alone (the matching path; H6 proper measures the whole hub process over 10k
 * sockets, 0.218 µs, bench/README.md). Goal: the pattern row within 1.5× of the plain row.
 *
 * Set-up, as H6's: 10,000 subscribers, each with a constrained subscription `{"group": g}` (g `hot`
 * for every tenth, else `cold`), three subscriptions to things never published, and every tenth one
 * a control subscription without a filter.
 * - plain (H6): the constrained one is to the type `bench.orders`, the three to types.
 * - patterns: the constrained one is to the pattern `bench.*`, the three to patterns that do not
 *   match (`never.*.a`, `never.b.>`, `*.never`): 10,000 pattern subscriptions that match.
 * - +30k others, same subscribers: as patterns, the three distinct per subscriber (`p<i>.*.x`,
 *   `bench.orders.x<i>.>`, `*.z<i>`): 30,000 patterns that do not match, some sharing the event's
 *   path in the trie. The cost must not grow with them: the trie visits only what could match.
 * - +30k others, other subscribers: as patterns, plus the same 30,000 held by 10,000 other
 *   subscribers made after: the same trie, the matching subscribers' objects made together.
 * Three kinds of event, as H6: `bench.orders` group=hot (10k filters evaluated, 1k matches), the
 * control `bench.ctl.hot` (the same 1k, no filter, an exact type) and `other.none` (nobody, no pattern either). Filter
 * cost per subscriber = (median time of a filtered event − median time of a control event) ÷ 10k.
 * Each sample matches one event `--events` times; `--rounds` samples per row and kind, the rows
 * taking turns; process CPU time (user + system). Bounded: about half a minute.
 * Run: `node bench/src/type-patterns.bench.ts [--rounds 9] [--events 300]`.
 */
import './harness/help.ts'; // first: --help prints the comment above and exits before anything runs
import { parseExtractorConfig, SubscriptionIndex } from '@gatehouse/push-hub';
import { boxLine, loadAverage, median } from './harness/index.ts';

const flag = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const rounds = flag('--rounds', 9);
const perSample = flag('--events', 300);
const subscribers = 10_000;

const field = { group: { stable_field_index: 0, event: { json_pointer: '/data/group' } } };
const extractors = parseExtractorConfig({ 'bench.orders': field, 'bench.*': field });

type Row = 'plain' | 'patterns' | '+30k others, same subscribers' | '+30k others, other subscribers';
const rows: Row[] = ['plain', 'patterns', '+30k others, same subscribers', '+30k others, other subscribers'];

/** The three subscriptions to what is never published, as H6's (shared) or distinct per subscriber. */
function others(row: Row, i: number): string[] {
  if (row === 'plain') return ['never.a', 'never.b', 'never.c'];
  if (row === '+30k others, same subscribers') return [`p${i}.*.x`, `bench.orders.x${i}.>`, `*.z${i}`];
  return ['never.*.a', 'never.b.>', '*.never'];
}

function build(row: Row): SubscriptionIndex<number> {
  const index = new SubscriptionIndex<number>(extractors);
  for (let i = 0; i < subscribers; i++) {
    const group = i % 10 === 0 ? 'hot' : 'cold';
    const filtered = { eventType: row === 'plain' ? 'bench.orders' : 'bench.*', oneOf: [{ group }] };
    const subs = [filtered, ...others(row, i).map((eventType) => ({ eventType, oneOf: [] }))];
    if (i % 10 === 0) subs.push({ eventType: 'bench.ctl.hot', oneOf: [] });
    index.set(i, subs);
  }
  // The same 30,000 patterns as the row before, on 10,000 subscribers of their own, made after.
  if (row === '+30k others, other subscribers')
    for (let i = 0; i < subscribers; i++)
      index.set(
        subscribers + i,
        others('+30k others, same subscribers', i).map((eventType) => ({ eventType, oneOf: [] })),
      );
  return index;
}

const events = {
  filtered: { type: 'bench.orders', data: { group: 'hot' } },
  control: { type: 'bench.ctl.hot', data: {} },
  none: { type: 'other.none', data: {} },
};

/** CPU µs per event over `perSample` matches; checks the matches counted. */
function sample(index: SubscriptionIndex<number>, event: { type: string }, expected: number): number {
  let matched = 0;
  const count = () => {
    matched++;
  };
  const start = process.cpuUsage();
  for (let n = 0; n < perSample; n++) index.match(event, count);
  const used = process.cpuUsage(start);
  if (matched !== expected * perSample)
    throw new Error(`${event.type}: ${matched / perSample} matches, not ${expected}`);
  return (used.user + used.system) / perSample;
}

const indexes = new Map(rows.map((r) => [r, build(r)]));
const times = new Map(
  rows.map((r) => [r, { filtered: [] as number[], control: [] as number[], none: [] as number[] }]),
);
for (const r of rows) sample(indexes.get(r)!, events.filtered, subscribers / 10); // warm-up
for (let round = 0; round < rounds; round++)
  for (const r of rows) {
    const index = indexes.get(r)!;
    const t = times.get(r)!;
    t.filtered.push(sample(index, events.filtered, subscribers / 10));
    t.control.push(sample(index, events.control, subscribers / 10));
    t.none.push(sample(index, events.none, 0));
  }

console.log(boxLine({ load: loadAverage().toFixed(2) }));
console.log(
  `${subscribers} subscribers, ${rounds} rounds × ${perSample} events per kind (CPU µs, medians)\n`,
);
console.log(
  '| row | patterns held | filtered event | control event | no subscriber | filter cost per subscriber per event |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
const cost = new Map<Row, number>();
for (const r of rows) {
  const t = times.get(r)!;
  const c = (median(t.filtered) - median(t.control)) / subscribers;
  cost.set(r, c);
  console.log(
    `| ${r} | ${indexes.get(r)!.patternCount} | ${median(t.filtered).toFixed(1)} µs | ${median(t.control).toFixed(1)} µs | ${median(t.none).toFixed(2)} µs | ${c.toFixed(3)} µs |`,
  );
}
const ratio = cost.get('patterns')! / cost.get('plain')!;
console.log(`\npatterns ÷ plain: ${ratio.toFixed(2)}× (goal ≤ 1.5×) → ${ratio <= 1.5 ? 'met' : 'NOT met'}`);
for (const r of rows.slice(2))
  console.log(`${r} ÷ patterns: ${(cost.get(r)! / cost.get('patterns')!).toFixed(2)}×`);
