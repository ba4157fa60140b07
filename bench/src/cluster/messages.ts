/** What the cluster bench's orchestrator and its client processes (client-process.ts) tell each other. */
import type { SparseHistogram } from './histogram.ts';
import type { ClientMixOptions, ClusterTransport } from './plan.ts';

export interface StartCommand {
  type: 'start';
  /** This process's clients: global indexes firstIndex … firstIndex + count − 1. */
  firstIndex: number;
  count: number;
  mix: ClientMixOptions;
  /** Public ports of the replicas, by replica index (the bystander's last when there is one). */
  ports: number[];
  /** Clients (after the ordinary ones) held on the bystander replica `ports[mix.replicas]`. */
  bystanders: number;
  /** Index of this process's first bystander among all bystanders. */
  firstBystander: number;
  /** The HS256 token the clients with a JWT send. */
  jwt: string;
  /** Connects started per second by this process. */
  connectsPerSecond: number;
  /** Room for event numbers 0 … maxEvents − 1 (one byte per client and event). */
  maxEvents: number;
  /** Source addresses 127.0.0.<2 …>: client i connects from address 2 + i % addresses. */
  addresses: number;
}

export interface StatusCommand {
  type: 'status';
}

/** Latencies from now on are recorded under this phase's name. */
export interface PhaseCommand {
  type: 'phase';
  name: string;
}

/** A replica is gone: no client picks it any more; its clients' recovery is watched. */
export interface RemoveCommand {
  type: 'remove';
  port: number;
}

export interface RecoveryCommand {
  type: 'recovery';
  /** When the replica was killed (Date.now()). */
  killedAt: number;
}

/** Count every (client, event) pair: `accepted[n]` is event n's type index, −1 when never accepted. */
export interface TallyCommand {
  type: 'tally';
  accepted: number[];
}

/** S3: SSE and WebSocket clients close and reconnect (resuming) at this rate, this process's share; 0 stops. */
export interface ChurnCommand {
  type: 'churn';
  perSecond: number;
}

export interface ChurnStatsCommand {
  type: 'churn-stats';
}

export interface StopCommand {
  type: 'stop';
}

export type ClusterCommand =
  | StartCommand
  | StatusCommand
  | PhaseCommand
  | RemoveCommand
  | RecoveryCommand
  | TallyCommand
  | ChurnCommand
  | ChurnStatsCommand
  | StopCommand;

export interface StatusReport {
  type: 'status';
  count: number;
  open: number;
  /** Open streams by replica port (the replica each client last connected to). */
  openByPort: Record<number, number>;
  /** First copies of events counted so far, and every copy. */
  deliveries: number;
  copies: number;
  /** Refused connects by HTTP status. */
  refusals: Record<number, number>;
}

export interface RecoveryReport {
  type: 'recovery';
  /** Clients that were on the removed replica. */
  watched: number;
  /** ms from the kill to each watched client's first frame from another replica (those back). */
  backMs: number[];
  /** Watched and back, by transport. */
  byTransport: Record<string, { watched: number; back: number }>;
}

export interface TransportTally {
  /** (client, event) pairs owed: the client subscribes to the accepted event's type. */
  owed: number;
  lost: number;
  /** Of those, pairs of clients with a stream open at the tally (back, yet without the event). */
  lostByOpen: number;
  duplicated: number;
  /** Copies of accepted events of types the client did not subscribe to. */
  unwanted: number;
}

export interface TallyReport {
  type: 'tally';
  byTransport: Record<ClusterTransport, TransportTally>;
  /** Bystander clients: every delivery to them is a mistake. */
  bystanderDeliveries: number;
  /** Copies of events that were never accepted (stored, then the answer lost): counted, not owed. */
  unacceptedDeliveries: number;
  /** Events numbered beyond maxEvents (not counted: the run made more events than it planned). */
  beyondRange: number;
  resyncs: number;
  /** Latency by phase, then by transport. */
  latency: Record<string, Record<string, SparseHistogram>>;
  /** Examples of lost pairs, for a failure to be read. */
  lostExamples: string[];
}

/** By phase: reconnects asked for, done (a frame came again), and close → first frame, ms. */
export interface ChurnStatsReport {
  type: 'churn-stats';
  steps: Record<string, { requested: number; reopened: number; latency: SparseHistogram }>;
}

export type ClusterReport =
  | ChurnStatsReport
  | StatusReport
  | RecoveryReport
  | TallyReport
  | { type: 'started' }
  | { type: 'stopped' }
  | { type: 'ok' };
