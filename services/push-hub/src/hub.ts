/**
 * The replica's delivery core: the connections it holds, their subscriptions, the recent events of
 * the fan-out stream, and sessions (for kills). Transports add and remove connections; the fan-out
 * consumer dispatches every stream event; each matching connection gets it exactly once.
 *
 * A connection resuming from a position older than the ring is served by a broker replay
 * (stream-replay.ts). While it runs, live events are not sent to that connection: they are in the
 * ring, and the hand-over sends the ring's events after the replay's position in the same step.
 * While tracing, each dispatched event is one delivery span (delivery-span.ts).
 */
import { isTracingActive } from '@gatehouse/tracing';
import type { CloseReason, Connection } from './connection.ts';
import { type FanoutSource, traceDelivery } from './delivery-span.ts';
import type { EventRing, RingEvent } from './event-ring.ts';
import type { ExtractorConfig } from './extractor-config.ts';
import {
  connectionCreated,
  type OutgoingEvent,
  resyncRequired,
  sessionKilled,
  subscriptionsSet,
} from './gateway-events.ts';
import type { HubMetrics } from './hub-metrics.ts';
import { readStreamEvent } from './stream-event.ts';
import type { ReplayTarget, StreamReplay } from './stream-replay.ts';
import type { Subscription } from './subscription.ts';
import { SubscriptionIndex } from './subscription-index.ts';

export interface HubOptions {
  extractors: ExtractorConfig;
  /** Recent fan-out events kept for Last-Event-ID and long-poll cursors. */
  ring: EventRing;
  /** Resumes older than the ring; without it they get `gw.resync_required`. */
  replay?: StreamReplay;
  metrics: HubMetrics;
  /** Where dispatched events come from; with it, each delivery is a span while tracing. */
  fanout?: FanoutSource;
  /** How long a resume position ahead of this replica may wait for it before it counts as unknown. */
  aheadGraceMs?: number;
}

/** A connection served by a broker replay, then until live events pass the replay's position. */
interface Resuming {
  /** What the connection has had up to; gateway events carry it as their position. */
  at: string;
  /** Undefined while replaying; then live events up to it are dropped (already replayed). */
  floor: string | undefined;
  target: ReplayTarget | undefined;
}

export class Hub {
  readonly ring: EventRing;
  readonly replay: StreamReplay | undefined;
  readonly index: SubscriptionIndex<Connection>;
  private readonly connections = new Map<string, Connection>();
  private readonly sessions = new Map<string, Set<Connection>>();
  private readonly resuming = new Map<Connection, Resuming>();
  private readonly metrics: HubMetrics;
  private readonly aheadGraceMs: number;
  private readonly fanout: FanoutSource | undefined;

  constructor(options: HubOptions) {
    this.ring = options.ring;
    this.replay = options.replay;
    this.index = new SubscriptionIndex(options.extractors);
    this.metrics = options.metrics;
    this.aheadGraceMs = options.aheadGraceMs ?? 5000;
    this.fanout = options.fanout;
  }

  get size(): number {
    return this.connections.size;
  }

  /**
   * Registers a connection and sends the welcome events (`token` in the first: the connection keeps
   * no copy, it is sent once); with `resumeFrom`, then the events after that position that match, or
   * `gw.resync_required` when the position is no longer held.
   */
  add(
    conn: Connection,
    subs: Subscription[],
    welcome: { token: string; resumeFrom?: string | undefined },
  ): void {
    const { token, resumeFrom } = welcome;
    this.index.set(conn, subs);
    this.connections.set(conn.id, conn);
    this.joinSession(conn);
    this.metrics.connectionOpened(conn.transport, this.index.size);
    // A resuming client's welcome carries its own position: it has nothing after it yet.
    if (resumeFrom !== undefined)
      this.resuming.set(conn, { at: resumeFrom, floor: undefined, target: undefined });
    this.sendOwn(conn, connectionCreated(token));
    this.sendOwn(conn, subscriptionsSet(subs));
    if (resumeFrom !== undefined) this.resume(conn, resumeFrom);
  }

  remove(conn: Connection): void {
    if (this.connections.get(conn.id) !== conn) return;
    this.connections.delete(conn.id);
    const resuming = this.resuming.get(conn);
    if (resuming) {
      this.resuming.delete(conn);
      if (resuming.target) this.replay?.cancel(resuming.target);
    }
    this.index.remove(conn);
    if (conn.sessionId !== undefined) {
      const set = this.sessions.get(conn.sessionId);
      set?.delete(conn);
      if (set?.size === 0) this.sessions.delete(conn.sessionId);
    }
    this.metrics.connectionClosed(conn.transport, this.index.size);
  }

  get(id: string): Connection | undefined {
    return this.connections.get(id);
  }

  /** The connections held now (a copy). */
  held(): Connection[] {
    return [...this.connections.values()];
  }

  /** The sessions of the connections held now. */
  sessionIds(): string[] {
    return [...this.sessions.keys()];
  }

  /** Closes a connection this replica still holds; false when it is already gone. */
  close(conn: Connection, reason: CloseReason): boolean {
    if (this.connections.get(conn.id) !== conn) return false;
    conn.close(reason);
    this.remove(conn);
    return true;
  }

  /**
   * Whether the fan-out stream could hold this position: the ring holds it, or it is well-formed
   * for the broker and not beyond the newest position this replica has reached (reconnect-evidence.ts).
   */
  couldHold(position: string): boolean {
    if (this.ring.has(position)) return true;
    return this.replay !== undefined && this.wellFormed(position) && this.replay.reached(position);
  }

  /** Replaces a held connection's subscriptions; false when this replica does not hold it. */
  setSubscriptions(id: string, subs: Subscription[], sessionId?: string): boolean {
    const conn = this.connections.get(id);
    if (!conn) return false;
    this.index.set(conn, subs);
    if (sessionId !== undefined && conn.sessionId === undefined) {
      conn.sessionId = sessionId;
      this.joinSession(conn);
    }
    this.metrics.subscriptionsChanged(this.index.size);
    this.sendOwn(conn, subscriptionsSet(subs));
    return true;
  }

  /** Sends `gw.session_killed` to every connection of the session and closes them. */
  killSession(sessionId: string): number {
    const conns = [...(this.sessions.get(sessionId) ?? [])];
    for (const conn of conns) {
      this.sendOwn(conn, sessionKilled(sessionId));
      conn.close('session_killed');
      this.remove(conn);
    }
    if (conns.length) this.metrics.sessionKilled(conns.length);
    return conns.length;
  }

  /**
   * One event from the fan-out stream: remember it, then deliver it to every matching connection.
   * Returns it as read, or undefined when it is not a CloudEvent the hub can read or is one the ring
   * holds already (same source and id: a source message taken in twice), which nobody gets again.
   */
  dispatch(position: string, json: string): RingEvent | undefined {
    const e = readStreamEvent(position, json);
    if (typeof e === 'string' || this.ring.holdsSameEvent(e)) {
      this.metrics.eventDropped(typeof e === 'string' ? e : 'duplicate');
      return undefined;
    }
    this.ring.push(e);
    const out: OutgoingEvent = { type: e.type, json: e.json, position };
    const delivered =
      this.fanout !== undefined && isTracingActive()
        ? traceDelivery(this.fanout, e.event, () => this.deliver(e.event as { type: string }, out, position))
        : this.deliver(e.event as { type: string }, out, position);
    this.metrics.eventDispatched(e.type, delivered);
    return e;
  }

  /** An event from before this replica went live (ring warm-up): kept for resumes, sent to nobody. */
  remember(position: string, json: string): void {
    const e = readStreamEvent(position, json);
    if (typeof e !== 'string' && !this.ring.holdsSameEvent(e)) this.ring.push(e);
  }

  /** Closes every connection (shutdown); clients reconnect elsewhere and resume with their last id. */
  closeAll(): void {
    for (const conn of this.held()) this.close(conn, 'shutdown');
  }

  /** Sends the event to every matching connection (not to one still catching up); answers how many. */
  private deliver(event: { type: string }, out: OutgoingEvent, position: string): number {
    let delivered = 0;
    this.index.match(event, (conn) => {
      if (this.resuming.size !== 0 && !this.passesResume(conn, position)) return;
      conn.send(out);
      delivered++;
    });
    return delivered;
  }

  /**
   * The ring's events after `from` when it holds all of them: `from` is held, or lies between the
   * oldest and the newest event held. Undefined otherwise (older, newer, malformed).
   */
  eventsAfter(from: string): RingEvent[] | undefined {
    return this.ring.after(from) ?? this.withinRing(from);
  }

  /** Serves a resume from the ring when it holds everything after `from`, else from the broker. */
  private resume(conn: Connection, from: string): void {
    const missed = this.eventsAfter(from);
    if (missed) {
      this.resuming.delete(conn);
      this.metrics.resumed('ring');
      this.sendMatching(conn, missed);
    } else if (!this.replay || !this.wellFormed(from)) {
      this.resyncOwn(conn, from);
    } else {
      const state = this.resuming.get(conn)!;
      state.target = this.replayTarget(conn, from, state);
      this.replay.request(state.target);
    }
  }

  /** The ring's events after a position it does not hold but whose successors it does. */
  private withinRing(from: string): RingEvent[] | undefined {
    const { oldest, head } = this.ring;
    if (!this.replay || oldest === undefined || !this.wellFormed(from)) return undefined;
    const { compare } = this.replay;
    if (compare(oldest, from) > 0 || compare(from, head!) > 0) return undefined;
    return this.ring.since(from, compare);
  }

  private wellFormed(position: string): boolean {
    try {
      this.replay?.compare(position, position);
      return true;
    } catch {
      return false;
    }
  }

  private replayTarget(conn: Connection, from: string, state: Resuming): ReplayTarget {
    const hub = this;
    return {
      from,
      get wanted() {
        return hub.connections.get(conn.id) === conn;
      },
      event: (e) => {
        this.sendMatching(conn, [e]);
        state.at = e.position;
        return true;
      },
      caughtUp: (at, rest, beyondRing) => {
        this.metrics.resumed('broker');
        this.sendMatching(conn, rest);
        state.at = rest.at(-1)?.position ?? at;
        state.target = undefined;
        if (!beyondRing) this.resuming.delete(conn);
        else {
          state.floor = at;
          if (!this.replay!.reached(at)) this.expectAhead(conn, state);
        }
      },
      unavailable: () => this.resyncOwn(conn, from),
      failed: () => {
        this.resuming.delete(conn);
        conn.close('unavailable');
        this.remove(conn);
      },
    };
  }

  /**
   * A floor beyond every event this replica has seen: a client that was on a replica ahead of this
   * one, or a position the stream never had. Once the grace has passed without the stream
   * reaching it, it counts as unknown.
   */
  private expectAhead(conn: Connection, state: Resuming): void {
    const timer = setTimeout(() => {
      if (this.resuming.get(conn) === state && !this.replay!.reached(state.floor!))
        this.resyncOwn(conn, state.floor!);
    }, this.aheadGraceMs);
    timer.unref();
  }

  private resyncOwn(conn: Connection, from: string): void {
    this.resuming.delete(conn);
    this.metrics.resumed('resync');
    this.sendOwn(conn, resyncRequired(from));
  }

  /** Live delivery to a connection being resumed: none while replaying, then only after the floor. */
  private passesResume(conn: Connection, position: string): boolean {
    const state = this.resuming.get(conn);
    if (!state) return true;
    if (state.floor === undefined || this.replay!.compare(position, state.floor) <= 0) return false;
    this.resuming.delete(conn);
    return true;
  }

  private sendMatching(conn: Connection, events: RingEvent[]): void {
    for (const e of events) {
      if (this.index.matches(conn, e.event as { type: string })) {
        conn.send({ type: e.type, json: e.json, position: e.position });
      }
    }
  }

  /**
   * Gateway-made events carry the position the connection is at (the stream head once it is live),
   * so a client that resumes from one continues where it was.
   */
  private sendOwn(conn: Connection, e: OutgoingEvent): void {
    conn.send({ ...e, position: this.resuming.get(conn)?.at ?? this.ring.head });
  }

  private joinSession(conn: Connection): void {
    if (conn.sessionId === undefined) return;
    let set = this.sessions.get(conn.sessionId);
    if (!set) {
      set = new Set();
      this.sessions.set(conn.sessionId, set);
    }
    set.add(conn);
  }
}
