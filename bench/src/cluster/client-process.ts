/**
 * One client process of the cluster bench (forked by clients.ts): holds its share of the clients
 * (at most ~15k: the box's 20,000 open files per process, with room for the reconnects' second
 * sockets), each a resuming SSE, WebSocket or long-polling client of @gatehouse/testkit (the ones
 * the reconnect-storm test counts with: SSE resumes with Last-Event-ID, WebSocket with
 * `positions=true` and `lastEventId`, long-polling with its cookies), from source addresses
 * 127.0.0.2 …, spread over the replicas (client i starts on replica i mod K and stays there while it
 * lives; a client of a removed replica goes to a random live one).
 *
 * Every (client, event) pair is counted in one byte per client and event number (how many copies
 * arrived), so lost and duplicated pairs are counted, never assumed; the first copy's publish →
 * arrival latency goes into a histogram of the current phase and transport.
 */
import {
  type PickReplica,
  ResumingLongPollClient,
  ResumingSseClient,
  ResumingWsClient,
} from '@gatehouse/testkit';
import { LatencyHistogram } from './histogram.ts';
import type {
  ChurnStatsReport,
  ClusterCommand,
  ClusterReport,
  RecoveryReport,
  StartCommand,
  StatusReport,
  TallyReport,
  TransportTally,
} from './messages.ts';
import {
  type ClusterTransport,
  clientSpec,
  connectionPath,
  eventType,
  transports,
  unwantedType,
} from './plan.ts';

const nPattern = /"n":(\d+)/;
const sentAtPattern = /"sentAt":([\d.]+)/;

interface Counted {
  /** Index among this process's clients (ordinary first, then bystanders). */
  slot: number;
  transport: ClusterTransport;
  types: number[];
  bystander: boolean;
  port: number;
  awaitingBack: boolean;
  backAt: number | undefined;
  /** When the churn closed its stream (performance.now()), until its next frame. */
  reconnectAt: number | undefined;
  /** The churn step that closed it: its reopening counts there, whenever it comes. */
  reconnectStep: ChurnStep | undefined;
  client: ResumingSseClient | ResumingWsClient | ResumingLongPollClient;
}

let plan: StartCommand;
let counts: Uint8Array;
const clients: Counted[] = [];
const alive = new Set<number>();
let aliveList: number[] = [];
let removedPort = -1;
let deliveries = 0;
let copies = 0;
let bystanderDeliveries = 0;
let beyondRange = 0;
let phase = 'connect';
const latency = new Map<string, LatencyHistogram>();
/** Churn (S3): reconnects asked for and done, and close → first frame again, by phase. */
interface ChurnStep {
  requested: number;
  reopened: number;
  latency: LatencyHistogram;
}
const churnSteps = new Map<string, ChurnStep>();
let churnTimer: NodeJS.Timeout | undefined;

function histogram(transport: ClusterTransport): LatencyHistogram {
  const key = `${phase}\t${transport}`;
  let h = latency.get(key);
  if (!h) {
    h = new LatencyHistogram();
    latency.set(key, h);
  }
  return h;
}

/** Called by every client for every frame it reads (after the testkit client's own bookkeeping). */
function onFrame(c: Counted, type: string, json: string): void {
  if (c.reconnectAt !== undefined) {
    c.reconnectStep!.reopened++;
    c.reconnectStep!.latency.add(performance.now() - c.reconnectAt);
    c.reconnectAt = undefined;
    c.reconnectStep = undefined;
  }
  if (c.awaitingBack && c.port !== removedPort) {
    c.awaitingBack = false;
    c.backAt = Date.now();
  }
  if (!type.startsWith('cl.')) return;
  const arrivedAt = performance.timeOrigin + performance.now();
  if (c.bystander) {
    bystanderDeliveries++;
    return;
  }
  const n = Number(nPattern.exec(json)?.[1]);
  if (!Number.isInteger(n) || n >= plan.maxEvents) {
    beyondRange++;
    return;
  }
  copies++;
  const at = c.slot * plan.maxEvents + n;
  const before = counts[at]!;
  if (before < 255) counts[at] = before + 1;
  if (before > 0) return;
  deliveries++;
  const sentAt = Number(sentAtPattern.exec(json)?.[1]);
  if (Number.isFinite(sentAt)) histogram(c.transport).add(arrivedAt - sentAt);
}

function onOpen(c: Counted, base: string): void {
  c.port = Number(base.slice(base.lastIndexOf(':') + 1));
}

function pickFor(home: number): PickReplica {
  const homeUrl = `http://127.0.0.1:${home}`;
  return () => {
    if (alive.has(home)) return homeUrl;
    if (aliveList.length === 0) return undefined;
    return `http://127.0.0.1:${aliveList[Math.floor(Math.random() * aliveList.length)]}`;
  };
}

function makeClient(
  slot: number,
  globalIndex: number,
  transport: ClusterTransport,
  typeNames: string[],
  types: number[],
  jwt: boolean,
  homePort: number,
  bystander: boolean,
): Counted {
  const path = connectionPath(transport, typeNames, jwt ? plan.jwt : undefined);
  // Filled in below, once its client exists: the client's observer reports into it.
  const counted = {} as Counted;
  const options = {
    localAddress: `127.0.0.${2 + (globalIndex % plan.addresses)}`,
    observer: {
      connecting: (base: string) => onOpen(counted, base),
      frame: (type: string, json: string) => onFrame(counted, type, json),
    },
  };
  const pick = pickFor(homePort);
  const client =
    transport === 'sse'
      ? new ResumingSseClient(pick, path, options)
      : transport === 'ws'
        ? new ResumingWsClient(pick, path, options)
        : new ResumingLongPollClient(pick, path, options);
  Object.assign(counted, {
    slot,
    transport,
    types,
    bystander,
    port: homePort,
    awaitingBack: false,
    backAt: undefined,
    reconnectAt: undefined,
    reconnectStep: undefined,
    client,
  } satisfies Counted);
  return counted;
}

function start(cmd: StartCommand): void {
  plan = cmd;
  for (const p of cmd.ports) alive.add(p);
  aliveList = [...alive];
  counts = new Uint8Array(cmd.count * cmd.maxEvents);
  for (let k = 0; k < cmd.count; k++) {
    const i = cmd.firstIndex + k;
    const spec = clientSpec(i, cmd.mix);
    clients.push(
      makeClient(
        k,
        i,
        spec.transport,
        spec.types.map(eventType),
        spec.types,
        spec.jwt,
        cmd.ports[spec.home]!,
        false,
      ),
    );
  }
  for (let k = 0; k < cmd.bystanders; k++) {
    const b = cmd.firstBystander + k;
    const transport = transports[b % transports.length]!;
    const names = Array.from({ length: cmd.mix.subscriptions }, (_, j) => unwantedType(b + j));
    clients.push(
      makeClient(cmd.count + k, b, transport, names, [], b % 2 === 1, cmd.ports[cmd.mix.replicas]!, true),
    );
  }
  // Paced: connectsPerSecond, in ticks of 20 ms.
  const perTick = Math.max(1, Math.round(cmd.connectsPerSecond / 50));
  let next = 0;
  const tick = setInterval(() => {
    for (let k = 0; k < perTick && next < clients.length; k++) clients[next++]!.client.start();
    if (next >= clients.length) clearInterval(tick);
  }, 20);
}

function churnStep(): ChurnStep {
  let step = churnSteps.get(phase);
  if (!step) {
    step = { requested: 0, reopened: 0, latency: new LatencyHistogram() };
    churnSteps.set(phase, step);
  }
  return step;
}

/**
 * Churn at `perSecond` (0 stops it): every 20 ms, that share of random open SSE and WebSocket
 * clients close their stream and connect again at once, resuming (long-polling has no stream to
 * close: its polls are a connect each already).
 */
function churn(perSecond: number): void {
  clearInterval(churnTimer);
  if (perSecond <= 0) return;
  const pool = clients.filter((c) => !c.bystander && c.transport !== 'longpolling');
  // Paced by the clock, not by the ticks: a busy loop fires them late, and the rate must hold.
  const startedAt = performance.now();
  let asked = 0;
  churnTimer = setInterval(() => {
    let owed = Math.floor(((performance.now() - startedAt) * perSecond) / 1000) - asked;
    for (let tries = 0; owed >= 1 && tries < pool.length; tries++) {
      const c = pool[Math.floor(Math.random() * pool.length)]!;
      if (!c.client.record.open || c.reconnectAt !== undefined) continue;
      owed--;
      asked++;
      const step = churnStep();
      step.requested++;
      c.reconnectStep = step;
      c.reconnectAt = performance.now();
      c.client.reconnect();
    }
  }, 20);
}

function churnStats(): ChurnStatsReport {
  return {
    type: 'churn-stats',
    steps: Object.fromEntries(
      [...churnSteps].map(([name, s]) => [
        name,
        { requested: s.requested, reopened: s.reopened, latency: s.latency.sparse() },
      ]),
    ),
  };
}

function status(): StatusReport {
  const openByPort: Record<number, number> = {};
  const refusals: Record<number, number> = {};
  let open = 0;
  for (const c of clients) {
    for (const s of c.client.record.refusals) refusals[s] = (refusals[s] ?? 0) + 1;
    if (!c.client.record.open) continue;
    open++;
    openByPort[c.port] = (openByPort[c.port] ?? 0) + 1;
  }
  return { type: 'status', count: clients.length, open, openByPort, deliveries, copies, refusals };
}

function remove(port: number): void {
  alive.delete(port);
  aliveList = [...alive];
  removedPort = port;
  for (const c of clients)
    if (c.port === port) {
      c.awaitingBack = true;
      c.backAt = undefined;
    }
}

function recovery(killedAt: number): RecoveryReport {
  const watched = clients.filter((c) => c.awaitingBack || c.backAt !== undefined);
  const backMs = watched.filter((c) => c.backAt !== undefined).map((c) => c.backAt! - killedAt);
  const byTransport: RecoveryReport['byTransport'] = {};
  for (const c of watched) {
    byTransport[c.transport] ??= { watched: 0, back: 0 };
    const t = byTransport[c.transport]!;
    t.watched++;
    if (c.backAt !== undefined) t.back++;
  }
  return { type: 'recovery', watched: watched.length, backMs, byTransport };
}

function tally(accepted: number[]): TallyReport {
  const byTransport = Object.fromEntries(
    transports.map((t) => [
      t,
      { owed: 0, lost: 0, lostByOpen: 0, duplicated: 0, unwanted: 0 } satisfies TransportTally,
    ]),
  ) as Record<ClusterTransport, TransportTally>;
  let unacceptedDeliveries = 0;
  const lostExamples: string[] = [];
  const events = Math.min(accepted.length, plan.maxEvents);
  for (const c of clients) {
    if (c.bystander) continue;
    const row = c.slot * plan.maxEvents;
    const t = byTransport[c.transport];
    for (let n = 0; n < events; n++) {
      const seen = counts[row + n]!;
      const type = accepted[n]!;
      if (type < 0) {
        unacceptedDeliveries += seen;
        continue;
      }
      if (!c.types.includes(type)) {
        // A copy of an event it never asked for: counted apart (a filtering bug, not a loss).
        t.unwanted += seen;
        continue;
      }
      t.owed++;
      if (seen === 0) {
        t.lost++;
        if (c.client.record.open) t.lostByOpen++;
        if (lostExamples.length < 5)
          lostExamples.push(
            `client ${plan.firstIndex + c.slot} (${c.transport}, last on :${c.port}, open ${c.client.record.open}) lost event ${n}`,
          );
      } else t.duplicated += seen - 1;
    }
  }
  const latencyOut: TallyReport['latency'] = {};
  for (const [key, h] of latency) {
    const [ph, transport] = key.split('\t') as [string, string];
    latencyOut[ph] ??= {};
    latencyOut[ph][transport] = h.sparse();
  }
  return {
    type: 'tally',
    byTransport,
    bystanderDeliveries,
    unacceptedDeliveries,
    beyondRange,
    resyncs: clients.reduce((a, c) => a + c.client.record.resyncs, 0),
    latency: latencyOut,
    lostExamples,
  };
}

function send(report: ClusterReport): void {
  process.send!(report);
}

process.on('message', (cmd: ClusterCommand) => {
  if (cmd.type === 'start') {
    start(cmd);
    send({ type: 'started' });
  } else if (cmd.type === 'status') send(status());
  else if (cmd.type === 'phase') {
    phase = cmd.name;
    send({ type: 'ok' });
  } else if (cmd.type === 'remove') {
    remove(cmd.port);
    send({ type: 'ok' });
  } else if (cmd.type === 'recovery') send(recovery(cmd.killedAt));
  else if (cmd.type === 'tally') send(tally(cmd.accepted));
  else if (cmd.type === 'churn') {
    churn(cmd.perSecond);
    send({ type: 'ok' });
  } else if (cmd.type === 'churn-stats') send(churnStats());
  else {
    clearInterval(churnTimer);
    for (const c of clients) c.client.stop();
    send({ type: 'stopped' });
  }
});
// The orchestrator went away: nothing left to count for.
process.on('disconnect', () => process.exit(0));
