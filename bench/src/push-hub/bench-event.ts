/**
 * The CloudEvent every push-hub benchmark publishes: structured JSON whose data carries a `group`
 * (what H2/H6 subscriptions filter on) and the publish time `sentAt`
 * (performance.timeOrigin + performance.now(), ms) that the client reads to compute latency.
 */
import { STAMP_FIELD } from '../clients/stamp-scanner.ts';

let seq = 0;

/** Now, in ms since the epoch with µs resolution, comparable across processes on this machine. */
export function stampNow(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000) / 1000;
}

export function benchEvent(type: string, group: string, stamp: number): string {
  seq++;
  return `{"specversion":"1.0","id":"bench-${seq}","type":"${type}","source":"/bench","data":{"group":"${group}","${STAMP_FIELD}":${stamp}}}`;
}
