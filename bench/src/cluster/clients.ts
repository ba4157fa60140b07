/**
 * The orchestrator's handle on the cluster bench's client processes (client-process.ts): forks
 * them (not pinned: on a two-core box every process shares both), splits the clients between them
 * and merges what they report.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { cpuNanosOf } from '../harness/proc.ts';
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
import { type ClusterTransport, transports } from './plan.ts';
import { type Cluster, clusterJwt } from './topology.ts';

const script = fileURLToPath(new URL('./client-process.ts', import.meta.url));

export interface ClientFleetPlan
  extends Omit<
    StartCommand,
    'type' | 'firstIndex' | 'count' | 'firstBystander' | 'bystanders' | 'connectsPerSecond'
  > {
  /** Ordinary clients in all. */
  clients: number;
  /** Bystander clients in all (on the bystander replica). */
  bystanderCount: number;
  /** Connects per second of all processes together. */
  totalConnectsPerSecond: number;
}

export interface MergedTally {
  byTransport: Record<ClusterTransport, TransportTally>;
  owed: number;
  lost: number;
  duplicated: number;
  unwanted: number;
  bystanderDeliveries: number;
  unacceptedDeliveries: number;
  beyondRange: number;
  resyncs: number;
  /** Latency by phase: every transport together (`all`) and each. */
  latency: Map<string, Map<string, LatencyHistogram>>;
  lostExamples: string[];
}

export interface ClientFleet {
  pids(): number[];
  cpuSeconds(): number;
  status(): Promise<StatusReport>;
  phase(name: string): Promise<void>;
  remove(port: number): Promise<void>;
  recovery(killedAt: number): Promise<RecoveryReport>;
  tally(accepted: number[]): Promise<MergedTally>;
  /** Churn at `perSecond` over all processes (0 stops). */
  churn(perSecond: number): Promise<void>;
  /** Merged churn figures by phase. */
  churnStats(): Promise<Map<string, { requested: number; reopened: number; latency: LatencyHistogram }>>;
  stop(): Promise<void>;
}

export async function startClientFleet(processes: number, plan: ClientFleetPlan): Promise<ClientFleet> {
  const children: ChildProcess[] = Array.from({ length: processes }, () =>
    fork(script, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
  );
  const share = (total: number, k: number) => Math.floor(total / processes) + (k < total % processes ? 1 : 0);
  let firstIndex = 0;
  let firstBystander = 0;
  await Promise.all(
    children.map((child, k) => {
      const count = share(plan.clients, k);
      const bystanders = share(plan.bystanderCount, k);
      const { clients: _c, bystanderCount: _b, totalConnectsPerSecond, ...rest } = plan;
      const cmd: StartCommand = {
        ...rest,
        type: 'start',
        firstIndex,
        count,
        bystanders,
        firstBystander,
        connectsPerSecond: Math.max(1, Math.round(totalConnectsPerSecond / processes)),
      };
      firstIndex += count;
      firstBystander += bystanders;
      return ask(child, cmd, 'started');
    }),
  );
  const all = <T extends ClusterReport>(cmd: ClusterCommand, answer: ClusterReport['type']) =>
    Promise.all(children.map((c) => ask<T>(c, cmd, answer)));
  return {
    pids: () => children.map((c) => c.pid!),
    cpuSeconds: () =>
      children.reduce((a, c) => {
        try {
          return a + cpuNanosOf(c.pid!) / 1e9;
        } catch {
          return a;
        }
      }, 0),
    async status() {
      const rs = await all<StatusReport>({ type: 'status' }, 'status');
      const openByPort: Record<number, number> = {};
      const refusals: Record<number, number> = {};
      for (const r of rs) {
        for (const [p, n] of Object.entries(r.openByPort))
          openByPort[Number(p)] = (openByPort[Number(p)] ?? 0) + n;
        for (const [s, n] of Object.entries(r.refusals)) refusals[Number(s)] = (refusals[Number(s)] ?? 0) + n;
      }
      return {
        type: 'status',
        count: sum(rs, (r) => r.count),
        open: sum(rs, (r) => r.open),
        openByPort,
        deliveries: sum(rs, (r) => r.deliveries),
        copies: sum(rs, (r) => r.copies),
        refusals,
      };
    },
    phase: (name) => all({ type: 'phase', name }, 'ok').then(() => undefined),
    remove: (port) => all({ type: 'remove', port }, 'ok').then(() => undefined),
    async recovery(killedAt) {
      const rs = await all<RecoveryReport>({ type: 'recovery', killedAt }, 'recovery');
      const byTransport: RecoveryReport['byTransport'] = {};
      for (const r of rs)
        for (const [t, v] of Object.entries(r.byTransport)) {
          byTransport[t] ??= { watched: 0, back: 0 };
          const into = byTransport[t]!;
          into.watched += v.watched;
          into.back += v.back;
        }
      return {
        type: 'recovery',
        watched: sum(rs, (r) => r.watched),
        backMs: rs.flatMap((r) => r.backMs),
        byTransport,
      };
    },
    async tally(accepted) {
      const rs = await all<TallyReport>({ type: 'tally', accepted }, 'tally');
      const byTransport = Object.fromEntries(
        transports.map((t) => [
          t,
          {
            owed: sum(rs, (r) => r.byTransport[t].owed),
            lost: sum(rs, (r) => r.byTransport[t].lost),
            lostByOpen: sum(rs, (r) => r.byTransport[t].lostByOpen ?? 0),
            duplicated: sum(rs, (r) => r.byTransport[t].duplicated),
            unwanted: sum(rs, (r) => r.byTransport[t].unwanted),
          },
        ]),
      ) as Record<ClusterTransport, TransportTally>;
      const latency = new Map<string, Map<string, LatencyHistogram>>();
      const into = (phase: string, key: string) => {
        let byKey = latency.get(phase);
        if (!byKey) {
          byKey = new Map();
          latency.set(phase, byKey);
        }
        let h = byKey.get(key);
        if (!h) {
          h = new LatencyHistogram();
          byKey.set(key, h);
        }
        return h;
      };
      for (const r of rs)
        for (const [phase, byTransportH] of Object.entries(r.latency))
          for (const [t, h] of Object.entries(byTransportH)) {
            into(phase, t).merge(h);
            into(phase, 'all').merge(h);
          }
      const totals = Object.values(byTransport);
      return {
        byTransport,
        owed: sum(totals, (t) => t.owed),
        lost: sum(totals, (t) => t.lost),
        duplicated: sum(totals, (t) => t.duplicated),
        unwanted: sum(totals, (t) => t.unwanted),
        bystanderDeliveries: sum(rs, (r) => r.bystanderDeliveries),
        unacceptedDeliveries: sum(rs, (r) => r.unacceptedDeliveries),
        beyondRange: sum(rs, (r) => r.beyondRange),
        resyncs: sum(rs, (r) => r.resyncs),
        latency,
        lostExamples: rs.flatMap((r) => r.lostExamples).slice(0, 10),
      };
    },
    churn: (perSecond) =>
      all({ type: 'churn', perSecond: perSecond / processes }, 'ok').then(() => undefined),
    async churnStats() {
      const rs = await all<ChurnStatsReport>({ type: 'churn-stats' }, 'churn-stats');
      const merged = new Map<string, { requested: number; reopened: number; latency: LatencyHistogram }>();
      for (const r of rs)
        for (const [name, s] of Object.entries(r.steps)) {
          let into = merged.get(name);
          if (!into) {
            into = { requested: 0, reopened: 0, latency: new LatencyHistogram() };
            merged.set(name, into);
          }
          into.requested += s.requested;
          into.reopened += s.reopened;
          into.latency.merge(s.latency);
        }
      return merged;
    },
    async stop() {
      await Promise.allSettled(children.map((c) => ask(c, { type: 'stop' }, 'stopped', 30_000)));
      await Promise.all(
        children.map(
          (c) =>
            new Promise<void>((resolve) => {
              if (c.exitCode !== null || c.signalCode !== null) return resolve();
              c.once('exit', () => resolve());
              c.disconnect();
              // A process that does not leave in 10 s is killed (its sockets go with it).
              setTimeout(() => c.kill('SIGKILL'), 10_000).unref();
            }),
        ),
      );
    },
  };
}

function sum<T>(xs: T[], f: (x: T) => number): number {
  return xs.reduce((a, x) => a + f(x), 0);
}

function ask<T extends ClusterReport>(
  child: ChildProcess,
  command: ClusterCommand,
  answer: ClusterReport['type'],
  timeoutMs = 120_000,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`client process ${child.pid}: no answer to ${command.type} in ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (r: ClusterReport) => {
      if (r.type !== answer) return;
      cleanup();
      resolve(r as T);
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`client process exited (${code}) while waiting for ${command.type}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.send(command);
  });
}

export interface FleetOptions {
  clients: number;
  /** Clients held on the bystander replica (S4), after the ordinary ones. */
  bystanders?: number;
  /** Replicas the ordinary clients are spread over. */
  replicas: number;
  types: number;
  subscriptions: number;
  connectRate: number;
  perClientProcess: number;
  addresses: number;
  maxEvents: number;
}

/** The client processes for a cluster: as many as `perClientProcess` asks, the JWT clients with the cluster's token. */
export function startFleetOn(cluster: Cluster, f: FleetOptions): Promise<ClientFleet> {
  const bystanders = f.bystanders ?? 0;
  return startClientFleet(Math.ceil((f.clients + bystanders) / f.perClientProcess), {
    clients: f.clients,
    bystanderCount: bystanders,
    totalConnectsPerSecond: f.connectRate,
    mix: { types: f.types, subscriptions: f.subscriptions, replicas: f.replicas },
    ports: cluster.replicas.map((r) => r.port),
    jwt: clusterJwt(),
    maxEvents: f.maxEvents,
    addresses: f.addresses,
  });
}
