/**
 * A cluster on one box (issue "100,000 connections with Kafka in the loop", first cut): K push-hub
 * replicas and a publisher, each its own process of this checkout's built JavaScript (built first
 * when stale), on the real Kafka (fan-out stream) and Redis (store, control) of `tools/deps.sh`
 * (`make deps-up`); clients in several client processes, spread over the replicas (client i on
 * replica i mod K; no balancer process: a client of a dead replica picks a live one at random, as
 * a Kubernetes Service would send it) and over source addresses 127.0.0.2 …. Client mix: SSE,
 * WebSocket (`positions=true`) and long-polling, a third each, half of each with an HS256 JWT, each
 * subscribed to a few (`--subscriptions`) of many (`--types`) event types; the resuming clients of
 * @gatehouse/testkit (the reconnect-storm test's), with a counter per (client, event) pair: lost
 * and duplicated pairs are counted, never assumed.
 *
 * S2 (`--scenarios s2`): N connections (`--connections`) held across K replicas (`--replicas`),
 * events at a steady rate (`--rate`/s, event n of type n mod types, posted to the publisher's
 * `POST /_gw/v1/events` with its publish time); over a steady window (`--seconds`): publish → client
 * latency p50/p99/max (all and per transport), CPU per delivery from /proc of every process (each
 * replica, the publisher, Kafka, Redis, the client processes, this orchestrator), RSS per connection
 * per replica and in total (VmRSS loaded − idle, no forced GC). Then replica 0 is SIGKILLed: its
 * clients come back on the others, resuming; time to recover (kill → each one's first frame from
 * another replica: p50, p99, last), then every pair counted once the producer stopped.
 * S1 (`--scenarios s1`, RIG's scenarios): `--s1-events` (1,000,000) records of `--s1-bytes` (1,024)
 * produced straight to the fan-out topic while `--replicas` hold each of `--s1-clients` (10000,40000)
 * clients; every `--s1-relevant-every` (10,000)th record, the first and the last are owed to the
 * clients of their type, the rest to nobody. Time until each replica read every record, beside a
 * bare kafkajs consume loop on the same topic, and until every owed pair arrived; CPU per record;
 * every pair counted (scenario-rig.ts); `--s1-timeout` (600) seconds at most per client count.
 * S3 (`--scenarios s3`, churn): N connections on K replicas with events flowing, then steps of
 * `--churn-rates` (100,200,400,800) reconnects per second, `--seconds` each: random SSE and
 * WebSocket clients close and connect again at once, resuming. Per step: reconnects done, close →
 * first frame, hub CPU per reconnect, delivery latency; every pair counted (scenario-churn.ts).
 * S4 (`--scenarios s4`): the same connections and events over each of `--replica-counts` (default
 * 1,2,4), every time with one more replica, the bystander, holding `--bystanders` clients
 * subscribed only to types nobody publishes. Three windows of `--seconds` each: quiet (connections
 * open, no events: each replica's own CPU rate), unwanted (`--unwanted-rate` events/s of a type no
 * client anywhere subscribes to), steady (the flowing types at `--rate`). Reported: cluster CPU per
 * event and per replica, each less its quiet rate; what a replica spends on events none of its
 * clients want = its CPU in the unwanted window less its quiet rate, ÷ events (every replica, the
 * bystander too), and the bystander's the same way over the steady window (the flowing types are
 * none of its clients').
 *
 * What the box forces (2 cores, 24 GiB, 20,000 open files per process that cannot be raised here):
 * one process holds at most ~19,500 connections, so a replica does too: 100k needs at least 6
 * replicas, and S2 checks that K − 1 replicas can hold everyone after the kill (100k: K ≥ 7); a
 * client process holds at most `--per-client-process` (default 15,000: room for the second socket
 * of a reconnect or a poll), so 100k needs 7 client processes. Everything shares two cores: the
 * clients' CPU (node:http, ws) is usually the largest share, so the event rate is kept low enough
 * for the box (deliveries/s = rate × connections × subscriptions ÷ types) and latency includes the
 * clients' own queueing. Per-replica figures are the replicas' own; the brokers' CPU is read too.
 *
 * Run: `node bench/src/cluster-scale.bench.ts [flags]`; needs Kafka and Redis (`make deps-up`;
 * KAFKA_BROKERS or KAFKA_PORT, REDIS_URL or REDIS_PORT). A smoke run (under a minute):
 * `node bench/src/cluster-scale.bench.ts --connections 2000 --replicas 2 --seconds 5 --scenarios s2`.
 * Flags: `--scenarios s1,s2,s3,s4` (default s1,s2,s3), `--connections 20000`, `--replicas 3` (S2),
 * `--replica-counts 1,2,4` (S4), `--bystanders 300` (S4), `--unwanted-rate 100` (S4), `--rate 3`
 * (events/s), `--types 30`, `--subscriptions 3`, `--seconds 20` (steady window), `--connect-rate
 * 1500` (connects/s, all client processes together), `--per-client-process 15000`, `--addresses 200`
 * (source addresses),
 * `--connect-timeout <s>` (default: connections ÷ connect rate × 4 + 60), `--recovery-timeout 180`,
 * `--longpoll-timeout <duration>` (the replicas' LONGPOLL_TIMEOUT; default the service's 5s: an idle
 * long-polling client polls every 5 s, which at 50k connections a third of them long-polling is
 * 3,300 polls/s before any event), `--json <file>` (the results), `--markdown <file>` (the printed
 * report, also written there).
 */
import './harness/help.ts'; // first: --help prints the comment above and exits before anything runs
import './harness/exit-on-signal.ts';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { churnMarkdown, rigMarkdown, s2Markdown, s4Markdown } from './cluster/report.ts';
import { type ChurnResult, runChurn } from './cluster/scenario-churn.ts';
import { type RigResult, runRig } from './cluster/scenario-rig.ts';
import { type ClusterOptions, runS2, runS4, type S2Result, type S4Result } from './cluster/scenarios.ts';
import { boxLine, raiseFdLimit } from './harness/index.ts';

const { values } = parseArgs({
  options: {
    scenarios: { type: 'string', default: 's1,s2,s3' },
    connections: { type: 'string', default: '20000' },
    replicas: { type: 'string', default: '3' },
    'replica-counts': { type: 'string', default: '1,2,4' },
    bystanders: { type: 'string', default: '300' },
    'unwanted-rate': { type: 'string', default: '100' },
    rate: { type: 'string', default: '3' },
    types: { type: 'string', default: '30' },
    subscriptions: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '20' },
    'connect-rate': { type: 'string', default: '1500' },
    'per-client-process': { type: 'string', default: '15000' },
    addresses: { type: 'string', default: '200' },
    'connect-timeout': { type: 'string' },
    'recovery-timeout': { type: 'string', default: '180' },
    'longpoll-timeout': { type: 'string' },
    's1-clients': { type: 'string', default: '10000,40000' },
    's1-events': { type: 'string', default: '1000000' },
    's1-bytes': { type: 'string', default: '1024' },
    's1-relevant-every': { type: 'string', default: '10000' },
    's1-timeout': { type: 'string', default: '600' },
    'churn-rates': { type: 'string', default: '100,200,400,800' },
    json: { type: 'string' },
    markdown: { type: 'string' },
  },
});

raiseFdLimit(process.pid);
const connections = Number(values.connections);
const connectRate = Number(values['connect-rate']);
const options: ClusterOptions = {
  connections,
  replicas: Number(values.replicas),
  rate: Number(values.rate),
  types: Number(values.types),
  subscriptions: Number(values.subscriptions),
  seconds: Number(values.seconds),
  connectRate,
  perClientProcess: Number(values['per-client-process']),
  addresses: Math.min(200, Number(values.addresses)),
  connectTimeout: Number(values['connect-timeout'] ?? Math.ceil((connections / connectRate) * 4 + 60)),
  recoveryTimeout: Number(values['recovery-timeout']),
  longpollTimeout: values['longpoll-timeout'],
  log: (line) => console.log(line),
};
const scenarios = new Set(values.scenarios.split(','));
const out: { box: string; s1?: RigResult; s2?: S2Result; s3?: ChurnResult; s4?: S4Result } = {
  box: boxLine(),
};
const report: string[] = [out.box, ''];
console.log(out.box);
if (scenarios.has('s1')) {
  out.s1 = await runRig({
    ...options,
    clientCounts: values['s1-clients'].split(',').map(Number),
    events: Number(values['s1-events']),
    bytes: Number(values['s1-bytes']),
    relevantEvery: Number(values['s1-relevant-every']),
    timeout: Number(values['s1-timeout']),
  });
  report.push(rigMarkdown(out.s1));
  console.log(`\n${rigMarkdown(out.s1)}`);
}
if (scenarios.has('s2')) {
  out.s2 = await runS2(options);
  report.push(s2Markdown(out.s2));
  console.log(`\n${s2Markdown(out.s2)}`);
}
if (scenarios.has('s3')) {
  out.s3 = await runChurn(options, values['churn-rates'].split(',').map(Number));
  report.push(churnMarkdown(out.s3));
  console.log(`\n${churnMarkdown(out.s3)}`);
}
if (scenarios.has('s4')) {
  const { replicas: _, ...rest } = options;
  out.s4 = await runS4(
    rest,
    values['replica-counts'].split(',').map(Number),
    Number(values.bystanders),
    Number(values['unwanted-rate']),
  );
  report.push(s4Markdown(out.s4));
  console.log(`\n${s4Markdown(out.s4)}`);
}
if (values.json) writeFileSync(values.json, JSON.stringify(out, null, 2));
if (values.markdown) writeFileSync(values.markdown, report.join('\n'));
// Sockets of the admin clients may linger: nothing is left to wait for.
process.exit(0);
