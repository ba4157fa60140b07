// The hub's Prometheus metrics, and the totals and rates of its replica stats.
export { HubMetrics } from './hub-metrics.ts';
export type { ReplicaCounters } from './replica-counters.ts';
export { type ConnectHookOutcome, ConnectHookMetrics } from './connect-hook-metrics.ts';
