/**
 * What a hub replica spends on fan-out events none of its clients want, with every replica reading
 * the whole stream (FANOUT_ROUTING=all) and with interest-based routing (FANOUT_ROUTING=interest:
 * the replica's NATS consumer reads only the types its clients subscribe to), on the NATS of
 * `tools/deps.sh`, at 1, 2, 4 and 8 replicas (`--replica-counts`), both modes in the same run,
 * alternating (all, interest) for each replica count so that both see the same load of the box.
 *
 * Set-up per (replica count, mode): K push-hub processes (services/push-hub/src/main.ts) on a fresh
 * fan-out stream (`<run>-gw-events`), Redis for the store and the control channel, each replica
 * holding `--clients` (20) SSE connections spread over `--types-per-replica` (1) types of its own
 * that nobody publishes here (client c of replica r wants type c mod N of r). Events are
 * written to the stream as the publisher writes them with FANOUT_ROUTING=interest (its CloudEvent
 * type as the route, the routing headers, ~500 bytes), by this process, so the publisher's CPU is
 * not in the figures. Three windows of `--seconds` (10) each: quiet (no events: each replica's own
 * CPU rate, timers and GC), unwanted (`--rate` events/s, 200, of a type no client wants), quiet
 * again. Per replica: CPU (schedstat, every thread) over the unwanted window until the replica has
 * read every event (all) or for the window plus a second (interest), less the mean of its two quiet
 * rates × that time, ÷ events;
 * the records it read (gw_fanout_events_total) and the NATS server's CPU per event likewise.
 *
 * What it does not measure: deliveries (no event is wanted), the publisher, the clients (idle).
 * NATS before 2.10 filters a consumer by one subject: there only `--types-per-replica 1` filters
 * (with more, a replica reads everything: its row's routed types say -1); tools/deps.sh runs 2.14.
 * Run: `node bench/src/interest-routing.bench.ts [--replica-counts 1,2,4,8] [--rate 200]
 * [--seconds 10] [--clients 20] [--types-per-replica 1] [--json <file>]`; needs NATS and Redis
 * (`make deps-up`).
 */
import './harness/help.ts'; // first: --help prints the comment above and exits before anything runs
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { NatsBus } from '@gatehouse/bus/all';
import { streamEventHeaders } from '@gatehouse/cloudevents';
import {
  dependencyAddress,
  gatewayEnv,
  openSse,
  type ServiceProcess,
  spawnService,
} from '@gatehouse/testkit';
import { listenerPid } from './cluster/topology.ts';
import { boxLine, cpuNanosOf, loadAverage } from './harness/index.ts';
import { HUB_NODE_ARGS } from './push-hub/hub-targets.ts';

const { values } = parseArgs({
  options: {
    'replica-counts': { type: 'string', default: '1,2,4,8' },
    rate: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '10' },
    clients: { type: 'string', default: '20' },
    'types-per-replica': { type: 'string', default: '1' },
    json: { type: 'string' },
  },
});
const rate = Number(values.rate);
const windowMs = Number(values.seconds) * 1000;
const clientsPerReplica = Number(values.clients);
const typesPerReplica = Number(values['types-per-replica']);
if (!(typesPerReplica >= 1 && typesPerReplica <= clientsPerReplica))
  throw new Error('--types-per-replica must be between 1 and --clients');
/** The type client `client` of replica `replica` subscribes to. */
const wantedType = (replica: number, client: number) =>
  `bench.wanted-by-clients.r${replica}.t${client % typesPerReplica}`;
const unwantedType = 'bench.wanted-by-nobody';

interface Row {
  mode: 'all' | 'interest';
  replicas: number;
  events: number;
  load: number;
  /** µs of a replica's CPU per unwanted event (mean over replicas, and each). */
  perEventUs: number;
  perReplicaUs: number[];
  /** Records each replica read from the stream. */
  recordsRead: number[];
  /** Types each replica's consumer filters by at the end (gw_fanout_routed_types; -1: every type). */
  routedTypes: number[];
  /** µs of the NATS server's CPU per event (all its work: the publish, every consumer's reads). */
  natsPerEventUs: number;
}

const cpuSeconds = (pid: number | undefined) => {
  if (pid === undefined) return 0;
  try {
    return cpuNanosOf(pid) / 1e9;
  } catch {
    return 0;
  }
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function metric(replica: ServiceProcess, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${replica.apiUrl}/metrics`)).text();
  // The service adds labels of its own (service="push-hub").
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line ? Number(line.split(' ').at(-1)) : 0;
}
const recordsRead = async (r: ServiceProcess) =>
  (await metric(r, 'gw_fanout_events_total', 'outcome="dispatched"')) +
  (await metric(r, 'gw_fanout_events_total', 'outcome="skipped"'));

/** CPU seconds per second of each replica and of the NATS server over a window without events. */
async function quietRates(cpus: () => number[], natsPid: number | undefined) {
  const replicas0 = cpus();
  const nats0 = cpuSeconds(natsPid);
  const start = performance.now();
  await sleep(windowMs);
  const seconds = (performance.now() - start) / 1000;
  return {
    replicas: cpus().map((c, i) => (c - replicas0[i]!) / seconds),
    nats: (cpuSeconds(natsPid) - nats0) / seconds,
  };
}

async function measure(mode: Row['mode'], count: number, bus: NatsBus): Promise<Row> {
  const run = `routing-${mode}-${count}-${Date.now().toString(36)}`;
  const base = gatewayEnv({ run, jwtSecret: 'interest-routing-bench-secret-for-hs256', fanout: 'nats' });
  const env = { ...base, LOG_LEVEL: 'warn', FANOUT_ROUTING: mode };
  const topic = base['FANOUT_TOPIC']!;
  const replicas: ServiceProcess[] = [];
  const clients: Array<{ close(): void }> = [];
  try {
    for (let i = 0; i < count; i++)
      replicas.push(
        await spawnService({
          entry: 'services/push-hub/src/main.ts',
          name: `hub-${i}`,
          publicPort: true,
          nodeArgs: HUB_NODE_ARGS,
          env: { ...env, REPLICA_ID: `${run}-${i}` },
          readyTimeoutMs: 120_000,
        }),
      );
    for (const [i, r] of replicas.entries())
      for (let c = 0; c < clientsPerReplica; c++) {
        const subscriptions = encodeURIComponent(JSON.stringify([{ eventType: wantedType(i, c) }]));
        clients.push(await openSse(`${r.publicUrl}/_gw/v1/connection/sse?subscriptions=${subscriptions}`));
      }
    await sleep(2000);
    const natsPid = listenerPid(Number(new URL(dependencyAddress.natsUrl).port || 4222));
    const cpus = () => replicas.map((r) => cpuSeconds(r.pid));

    // Each replica's own rate without events, before and after the events (its start settling,
    // timers, GC): the mean of the two is taken off.
    const quietBefore = await quietRates(cpus, natsPid);
    const read0 = await Promise.all(replicas.map(recordsRead));
    const busy0 = cpus();
    const natsBusy0 = cpuSeconds(natsPid);
    const start = performance.now();
    let events = 0;
    const body = 'x'.repeat(400);
    while (performance.now() - start < windowMs) {
      const due = Math.floor(((performance.now() - start) / 1000) * rate);
      for (; events < due; events++) {
        const event = {
          specversion: '1.0',
          id: `${run}-${events}`,
          source: 'bench',
          type: unwantedType,
          data: { n: events, body },
        };
        await bus.publish(
          topic,
          { value: JSON.stringify(event), headers: streamEventHeaders(event) },
          { route: unwantedType },
        );
      }
      await sleep(5);
    }
    // Until every replica that reads everything has read every event; a second for the others.
    const settleBy = Date.now() + 30_000;
    await sleep(1000);
    while (Date.now() < settleBy) {
      const read = await Promise.all(replicas.map(recordsRead));
      if (mode === 'interest' || read.every((n, i) => n - read0[i]! >= events)) break;
      await sleep(200);
    }
    const busySeconds = (performance.now() - start) / 1000;
    const busy = cpus();
    const natsBusy = cpuSeconds(natsPid);
    const quietAfter = await quietRates(cpus, natsPid);
    const quietRatesOf = quietBefore.replicas.map((r, i) => (r + quietAfter.replicas[i]!) / 2);
    const natsQuietRate = (quietBefore.nats + quietAfter.nats) / 2;
    const perReplicaUs = busy.map(
      (c, i) => ((c - busy0[i]! - quietRatesOf[i]! * busySeconds) / events) * 1e6,
    );
    const read = await Promise.all(replicas.map(recordsRead));
    const routedTypes = await Promise.all(replicas.map((r) => metric(r, 'gw_fanout_routed_types', '')));
    const natsPerEventUs = ((natsBusy - natsBusy0 - natsQuietRate * busySeconds) / events) * 1e6;
    return {
      mode,
      replicas: count,
      events,
      load: loadAverage(),
      perEventUs: perReplicaUs.reduce((a, b) => a + b, 0) / count,
      perReplicaUs,
      recordsRead: read.map((n, i) => n - read0[i]!),
      routedTypes,
      natsPerEventUs,
    };
  } finally {
    for (const c of clients) c.close();
    await Promise.allSettled(replicas.map((r) => r.stop(10_000)));
  }
}

const box = boxLine();
console.log(box);
const bus = await NatsBus.connect({ servers: dependencyAddress.natsUrl, name: 'interest-routing-bench' });
const rows: Row[] = [];
try {
  for (const count of values['replica-counts'].split(',').map(Number)) {
    for (const mode of ['all', 'interest'] as const) {
      const row = await measure(mode, count, bus);
      rows.push(row);
      console.log(
        `${mode.padEnd(8)} K=${count}: ${row.events} events, ${row.perEventUs.toFixed(1)} µs per unwanted event per replica ` +
          `(each: ${row.perReplicaUs.map((u) => u.toFixed(1)).join(', ')}), records read ${row.recordsRead.join(', ')}, ` +
          `routed types ${row.routedTypes.join(', ')}, NATS ${row.natsPerEventUs.toFixed(1)} µs/event, load ${row.load.toFixed(1)}`,
      );
    }
  }
} finally {
  await bus.close();
}
console.log(`\n${clientsPerReplica} clients per replica over ${typesPerReplica} type(s) of its own`);
console.log(
  '\n| replicas | mode | events | µs per unwanted event per replica | records read per replica | routed types | cluster µs per event (replicas) | NATS µs per event | load |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of rows)
  console.log(
    `| ${r.replicas} | ${r.mode} | ${r.events} | ${r.perEventUs.toFixed(1)} | ${Math.round(r.recordsRead.reduce((a, b) => a + b, 0) / r.replicas)} | ${r.mode === 'all' ? '–' : [...new Set(r.routedTypes)].join('/')} | ${(r.perEventUs * r.replicas).toFixed(1)} | ${r.natsPerEventUs.toFixed(1)} | ${r.load.toFixed(1)} |`,
  );
if (values.json)
  writeFileSync(values.json, JSON.stringify({ box, clientsPerReplica, typesPerReplica, rows }, null, 2));
process.exit(0);
