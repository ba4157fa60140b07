/**
 * Running totals of one replica for the console (`GET /v3/replicas` → `counters`): the page
 * samples them every few seconds and turns the differences into rates and a latency histogram,
 * summed over replicas. Kept here as plain numbers next to the Prometheus metrics because the
 * registry is read asynchronously and per label set; this is a fixed, small object (bounded
 * answers on the control channel). Totals since the replica started: a restart shows as a drop,
 * which the page skips.
 */

/** gw_fanout_delivery_seconds' bucket bounds (seconds), shared with the histogram. */
export const DELIVERY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export interface ReplicaCounters {
  /** Fan-out events dispatched to this replica (events in). */
  eventsIn: number;
  /** Events written to connections (deliveries out). */
  deliveries: number;
  /** Connects the rate limit admitted. */
  connects: number;
  /** Refused connection attempts by HTTP status: "400" (bad request or JWT), "403", "429", "503". */
  refused: Record<string, number>;
  slowConsumerDisconnects: number;
  /** Connections closed because their session was blacklisted. */
  sessionKills: number;
  /** Publish → written, as counts per bucket (not cumulative; the last is above the last bound). */
  delivery: { bounds: number[]; counts: number[]; sum: number };
}

export class CounterTally {
  private readonly totals: ReplicaCounters = {
    eventsIn: 0,
    deliveries: 0,
    connects: 0,
    refused: {},
    slowConsumerDisconnects: 0,
    sessionKills: 0,
    delivery: { bounds: DELIVERY_BUCKETS, counts: DELIVERY_BUCKETS.map(() => 0).concat(0), sum: 0 },
  };

  eventIn(deliveries: number): void {
    this.totals.eventsIn++;
    this.totals.deliveries += deliveries;
  }

  connected(): void {
    this.totals.connects++;
  }

  /** Only the statuses the gate answers reach here, so the record stays a handful of keys. */
  refused(status: number): void {
    const key = String(status);
    this.totals.refused[key] = (this.totals.refused[key] ?? 0) + 1;
  }

  slowConsumerClosed(): void {
    this.totals.slowConsumerDisconnects++;
  }

  sessionKilled(connections: number): void {
    this.totals.sessionKills += connections;
  }

  delivered(seconds: number): void {
    const { delivery } = this.totals;
    const { bounds } = delivery;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]!) i++;
    delivery.counts[i]!++;
    delivery.sum += seconds;
  }

  /** A copy, so an answer being serialised never sees later increments. */
  snapshot(): ReplicaCounters {
    const t = this.totals;
    return {
      ...t,
      refused: { ...t.refused },
      delivery: { bounds: t.delivery.bounds, counts: [...t.delivery.counts], sum: t.delivery.sum },
    };
  }
}
