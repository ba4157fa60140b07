/**
 * Interest-based routing of the fan-out stream (FANOUT_ROUTING=interest): the replica's fan-out
 * subscription reads only the event types its connections and waiting long polls subscribe to, on
 * a bus that can filter by route (NATS: a subject per type in the stream's one order,
 * nats-route-subject.ts in @gatehouse/bus). Positions stay the stream's, the same on every replica.
 *
 * What the ring holds is then only the types read, each from when it began to be read. So a type
 * is "covered" from a position on: every event of it after that position is dispatched here (or in
 * the ring). A resume or a poll's cursor is served from the ring only where all of its types are
 * covered since its position; otherwise by a broker replay (read whole), until the replay reaches
 * a position where they are (stream-replay.ts, catch-up.ts).
 *
 * A type wanted anew is read at once: the subscription stops delivering until it reads with the new
 * routes, from right after the last event it delivered, so nothing in between is lost. A type no
 * longer wanted is dropped only after `lingerMs` (a long poll comes back between its polls; each
 * change of routes reopens the broker consumer). More types than `maxTypes` (FANOUT_ROUTING_MAX_TYPES,
 * or what the broker can filter by) and the replica reads everything until they are fewer again.
 *
 * A type pattern (`com.example.orders.*`) is read the same way, as every type, for as long as one
 * is wanted: a route is one subject token per type (nats-route-subject.ts encodes the dots), so no
 * filter subject selects a pattern's types. Nothing is missed, the replica only reads more.
 */
import type { Position, Subscription } from '@gatehouse/bus';
import { isTypePattern } from '@gatehouse/cloudevents';
import type { TypeInterest } from '../subscriptions/index.ts';

export interface FanoutInterestOptions {
  compare(a: Position, b: Position): number;
  maxTypes: number;
  lingerMs: number;
  /** Told the number of types read after each change (-1: every type). */
  changed?(types: number): void;
}

export class FanoutInterest implements TypeInterest {
  private readonly options: FanoutInterestOptions;
  /** Subscribers per type, over every index that tells this one (connections, long polls). */
  private readonly counts = new Map<string, number>();
  /** The types read, each with the position after which every event of it is dispatched here. */
  private readonly since = new Map<string, Position>();
  /** While more types are wanted than can be filtered: every type is read after this position. */
  private allSince: Position | undefined;
  private subscription: Subscription | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(options: FanoutInterestOptions) {
    this.options = options;
  }

  /** The fan-out subscription (made with the types wanted then: none) starts following the interest. */
  attach(subscription: Subscription): void {
    this.subscription = subscription;
    for (const type of this.counts.keys()) this.read(type);
  }

  up(type: string): void {
    const n = this.counts.get(type) ?? 0;
    this.counts.set(type, n + 1);
    if (n === 0 && !this.since.has(type)) this.read(type);
  }

  down(type: string): void {
    const n = (this.counts.get(type) ?? 1) - 1;
    if (n > 0) {
      this.counts.set(type, n);
      return;
    }
    this.counts.delete(type);
    if (this.sweepTimer === undefined) {
      this.sweepTimer = setTimeout(() => this.sweep(), this.options.lingerMs);
      this.sweepTimer.unref();
    }
  }

  /** Whether every event of each of `types` after `position` is dispatched here (or in the ring). */
  covers(types: Iterable<string>, position: Position): boolean {
    const { compare } = this.options;
    if (this.allSince !== undefined && compare(this.allSince, position) <= 0) return true;
    for (const type of types) {
      const since = this.since.get(type);
      if (since === undefined || compare(since, position) > 0) return false;
    }
    return true;
  }

  /** Types read now (-1: every type). */
  get reading(): number {
    return this.allSince !== undefined ? -1 : this.since.size;
  }

  close(): void {
    clearTimeout(this.sweepTimer);
  }

  private read(type: string): void {
    const sub = this.subscription;
    if (!sub?.route) return;
    if (this.allSince !== undefined) {
      this.since.set(type, this.allSince);
      return;
    }
    const routes = new Set([...this.since.keys(), type]);
    const everything = routes.size > this.options.maxTypes || isTypePattern(type);
    const at = sub.route(everything ? undefined : routes);
    if (everything) this.allSince = at;
    this.since.set(type, at);
    this.options.changed?.(this.reading);
  }

  /** Stops reading the types nobody has wanted for `lingerMs`. */
  private sweep(): void {
    this.sweepTimer = undefined;
    let dropped = false;
    for (const type of this.since.keys())
      if (!this.counts.has(type)) dropped = this.since.delete(type) || dropped;
    const sub = this.subscription;
    if (!sub?.route) return;
    const filterable =
      this.since.size <= this.options.maxTypes && ![...this.since.keys()].some(isTypePattern);
    if (!filterable || (!dropped && this.allSince === undefined)) return;
    // Back to (or still) a filter: the types kept have been read all along, their `since` holds.
    this.allSince = undefined;
    sub.route(new Set(this.since.keys()));
    this.options.changed?.(this.reading);
  }
}
