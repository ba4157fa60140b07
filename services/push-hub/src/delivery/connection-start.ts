/**
 * How a new connection that does not resume starts: with `rewind=N`, the last N events it matches
 * first (from the ring, or past it from the broker's tail), with `latest`, the newest kept event of
 * each of its places (the store); then live. Either way, live events that come while the start is
 * looked up are held (catch-up.ts) and sent after it, so each event comes once, in order.
 */
import type { Connection } from '../connections/index.ts';
import { type BrokerTailOptions, readBrokerTail, readBrokerTailStart } from './broker-tail.ts';
import type { LatestValue, LatestValues } from './latest-values.ts';
import { type Subscription, type SubscriptionIndex, typeFilterOf } from '../subscriptions/index.ts';
import type { CatchUp } from './catch-up.ts';
import type { EventRing, RingEvent } from './event-ring.ts';
import { rewindStart } from './rewind-start.ts';

export interface ConnectionStartDeps {
  ring: EventRing;
  catchUp: CatchUp;
  index: SubscriptionIndex<Connection>;
  /** Whether the ring has every event of `types` after `position` (interest routing). */
  covers(types: Iterable<string>, position: string): boolean;
  /** A resume from `from` (ring, broker replay, or `gw.resync_required`). */
  resume(conn: Connection, from: string): void;
  /** Our store or broker failed the start: the connection ends, its client comes back. */
  close(conn: Connection): void;
  /** HISTORY_MAX_LIMIT: a larger rewind is taken down to it. */
  maxRewind: number;
  /**
   * The ring was filled from the stream's newest events at start (EVENT_BUFFER_WARMUP): while it has
   * dropped none and is not full, it holds the whole stream.
   */
  warmedUp: boolean;
  /** The broker's tail, for a rewind further back than the ring holds; without it, the ring's only. */
  tail: BrokerTailOptions | undefined;
  latest: LatestValues | undefined;
}

export class ConnectionStart {
  private readonly deps: ConnectionStartDeps;

  constructor(deps: ConnectionStartDeps) {
    this.deps = deps;
  }

  /**
   * Whether the ring holds every event of the stream: it was warmed up from the stream, has dropped
   * none and is not full (a full warm-up may have left older ones on the broker). Without a warm-up,
   * the events before this replica started are on the broker only.
   */
  ringHoldsWholeStream(): boolean {
    const { ring, warmedUp } = this.deps;
    return warmedUp && ring.end === ring.size && ring.size < ring.capacity;
  }

  /** The last `n` events `conn` matches: from the ring when it holds them, else from the broker. */
  rewind(conn: Connection, asked: number): void {
    const { ring, catchUp, index, tail } = this.deps;
    const n = Math.min(asked, this.deps.maxRewind);
    const matches = this.matchesOf(conn);
    const usable = ring.oldest !== undefined && this.deps.covers(index.typesOf(conn), ring.oldest);
    const start = usable ? rewindStart(ring, matches, n, this.ringHoldsWholeStream()) : undefined;
    if (start && (start.found >= n || start.complete || !tail)) {
      if (start.found > 0) catchUp.rewind(conn, start.seq);
      return;
    }
    if (tail) this.rewindFromBroker(conn, n, matches, tail);
  }

  /**
   * The newest kept events of its places, read from the store while live events wait (held); then
   * it goes on from the ring where it was held. A kept event the ring's part sends is not sent twice.
   * Each goes at the place the connection started (its welcome's), not its own: a client resuming
   * after one must go on from there, and a kept event's own position may be long gone from the
   * stream, or of another epoch (kept before the topic was made anew).
   */
  latest(conn: Connection, subs: Subscription[]): void {
    const { ring, catchUp, latest } = this.deps;
    if (!latest) return;
    const held = catchUp.hold(conn);
    const liveFrom = ring.end;
    const startedAt = ring.place;
    latest.of(subs, this.matchesOf(conn)).then(
      (values) => {
        if (!catchUp.holds(conn, held)) return;
        catchUp.forget(conn);
        const firstLive = ring.get(liveFrom)?.position;
        for (const v of values)
          if (firstLive === undefined || latest.compare(v.position, firstLive) < 0)
            conn.send({ type: v.type, json: v.json, position: startedAt ?? v.position });
        catchUp.rewind(conn, liveFrom);
      },
      () => {
        if (catchUp.holds(conn, held)) this.deps.close(conn);
      },
    );
  }

  /**
   * A long poll's rewind, as the cursor it starts at: the position before the oldest of the last
   * `n` events `subscriptions` match, from the ring when it holds them, else from the broker's tail
   * (the position of the message read before the oldest). Undefined when neither holds any.
   */
  async rewindCursor(subscriptions: Subscription[], n: number): Promise<string | undefined> {
    const { tail } = this.deps;
    const types = new Set(subscriptions.map((s) => s.eventType));
    const wanted = this.wantedBy(subscriptions);
    const asked = Math.min(n, this.deps.maxRewind);
    const fromRing = this.ringCursor(types, wanted, asked, tail !== undefined);
    if (fromRing !== 'broker') return fromRing;
    const start = await readBrokerTailStart(tail!, wanted, asked, undefined);
    const first = start.events[0];
    if (!first) return undefined;
    // The oldest of a full scan: the message before it was not read, so the rewind starts after it.
    return start.before ?? first.position;
  }

  /**
   * A long poll's rewind from the ring: its cursor, undefined when the ring holds none of the events
   * and nothing older is owed, or `'broker'` when the broker's tail must say (`brokerKnows`).
   */
  private ringCursor(
    types: ReadonlySet<string>,
    wanted: (e: RingEvent) => boolean,
    n: number,
    brokerKnows: boolean,
  ): string | undefined | 'broker' {
    const { ring } = this.deps;
    const usable = ring.oldest !== undefined && this.deps.covers(types, ring.oldest);
    if (!usable) return brokerKnows ? 'broker' : undefined;
    const start = rewindStart(ring, wanted, n, this.ringHoldsWholeStream());
    const before = ring.get(start.seq - 1)?.position;
    const whole = start.found >= n || start.complete;
    if (whole && start.found === 0) return undefined;
    if (whole && before !== undefined) return before;
    // Nothing before the ring's oldest: all of it when the ring has all.
    if (start.complete) return '';
    if (brokerKnows) return 'broker';
    return start.found === 0 ? undefined : ring.get(start.seq)!.position;
  }

  /**
   * The broker's tail names the oldest of the last `n` events: it is sent, then the connection
   * resumes from it (ring or replay), so that what came meanwhile is sent once, in order.
   */
  private rewindFromBroker(
    conn: Connection,
    n: number,
    matches: (e: RingEvent) => boolean,
    tail: BrokerTailOptions,
  ): void {
    const { ring, catchUp } = this.deps;
    const held = catchUp.hold(conn);
    const liveFrom = ring.end;
    readBrokerTail(tail, matches, n, undefined).then(
      (events) => {
        if (!catchUp.holds(conn, held)) return;
        catchUp.forget(conn);
        const first = events[0];
        if (!first) return catchUp.rewind(conn, liveFrom);
        conn.send({ type: first.type, json: first.json, position: first.position });
        this.deps.resume(conn, first.position);
      },
      () => {
        if (catchUp.holds(conn, held)) this.deps.close(conn);
      },
    );
  }

  /**
   * A long poll's latest values: the newest kept events `subscriptions` want that its stream part,
   * the events after `cursor`, does not carry, oldest first. A value kept after the cursor comes in
   * its place in the stream instead (as on SSE, a value newer than where live delivery starts).
   * `after`: only those after this position (a page of them was sent).
   */
  async latestAt(
    subscriptions: Subscription[],
    cursor: string,
    after: string | undefined,
  ): Promise<LatestValue[]> {
    const { latest, ring } = this.deps;
    if (!latest) return [];
    const values = await latest.of(subscriptions, this.wantedBy(subscriptions));
    // `''` is the ring's start: the stream part carries what the ring holds.
    const streamFrom = cursor === '' ? ring.oldest : cursor;
    const inclusive = cursor !== '';
    return values.filter((v) => {
      try {
        if (after !== undefined && latest.compare(v.position, after) <= 0) return false;
        if (streamFrom === undefined) return true;
        const order = latest.compare(v.position, streamFrom);
        return order < 0 || (inclusive && order === 0);
      } catch {
        // A cursor the bus cannot read: the stream part answers it with gw.resync_required.
        return true;
      }
    });
  }

  /** Whether `subscriptions` want an event; the type first (a pattern's too): an unread event of a type they do not want stays unread. */
  private wantedBy(subscriptions: Subscription[]): (e: RingEvent) => boolean {
    const matches = this.deps.index.matcherFor(subscriptions);
    const wantsType = typeFilterOf(subscriptions);
    return (e) => wantsType(e.type) && matches(e.event as { type: string });
  }

  /** The type first: an unread event of a type it does not want stays unread. */
  private matchesOf(conn: Connection): (e: RingEvent) => boolean {
    const { index } = this.deps;
    return (e) => index.subscribes(conn, e.type) && index.matches(conn, e.event as { type: string });
  }
}
