/**
 * The replica's delivery core: the connections it holds, their subscriptions, the recent events of
 * the fan-out stream, and sessions (for kills). Transports add and remove connections; the fan-out
 * consumer dispatches every stream event; each matching connection gets it exactly once.
 *
 * A connection that resumes, or whose client reads slower than events come, is behind: it is
 * written from the ring (or a broker replay) at its own place with backpressure, and goes live
 * again when it reaches the newest event (catch-up.ts). While tracing, each dispatched event is one
 * delivery span (delivery-span.ts).
 */
import type { StreamEventHeaders } from '@gatehouse/cloudevents';
import { isTracingActive } from '@gatehouse/tracing';
import { type Behind, CatchUp } from './catch-up.ts';
import { ExpiryWheel } from './expiry-wheel.ts';
import {
  type CloseReason,
  type Connection,
  type ConnectionAbout,
  connectionClosed,
  connectionCreated,
  type ConnectionFacts,
  type OutgoingEvent,
  type ResyncReason,
  resyncRequired,
  sessionExpired,
  sessionKilled,
  subscriptionsSet,
} from '../connections/index.ts';
import { type FanoutSource, traceDelivery } from './delivery-span.ts';
import type { EventRing, RingEvent } from './event-ring.ts';
import type { FanoutInterest } from './fanout-interest.ts';
import {
  type ExtractorConfig,
  type PatternLimits,
  type Subscription,
  SubscriptionIndex,
} from '../subscriptions/index.ts';
import { keepGranted } from '../admission/index.ts';
import type { HubMetrics } from '../metrics/index.ts';
import type { ChangeCause, ConnectionLifecycle, ConnectionSnapshot, EndReason } from '../lifecycle/index.ts';
import { readStreamEvent } from './stream-event.ts';
import type { StreamReplay } from './stream-replay.ts';
import { UnreadEvent } from './unread-event.ts';
import { ConnectionStart } from './connection-start.ts';
import { HeldConnection } from './held-connection.ts';
import type { BrokerTailOptions } from './broker-tail.ts';
import type { LatestValue, LatestValues } from './latest-values.ts';
import type { AckWelcome } from '../acks/index.ts';
import { RecentKills, type RecentKillsOptions } from '../blacklist/index.ts';

export interface HubOptions {
  extractors: ExtractorConfig;
  /** Recent fan-out events kept for Last-Event-ID and long-poll cursors. */
  ring: EventRing;
  /** Resumes older than the ring; without it they get `gw.resync_required`. */
  replay?: StreamReplay;
  /**
   * FANOUT_ROUTING=interest: the types the fan-out subscription reads follow the subscriptions
   * held, and the ring serves a position only for the types read since (fanout-interest.ts).
   */
  interest?: FanoutInterest | undefined;
  /** MAX_PATTERN_SEGMENTS and MAX_TYPE_PATTERNS (subscription-index.ts). */
  patternLimits?: PatternLimits | undefined;
  metrics: HubMetrics;
  /** Where dispatched events come from; with it, each delivery is a span while tracing. */
  fanout?: FanoutSource;
  /** How long a resume position ahead of this replica may wait for it before it counts as unknown. */
  aheadGraceMs?: number;
  /**
   * Bytes of events a connection that is behind may leave unread before it is closed as a slow
   * consumer (MAX_BUFFERED_BYTES); a resume's backlog does not count (catch-up.ts).
   */
  maxUnreadBytes?: number;
  /**
   * Told of every change of a held connection's subscriptions: when it is added (`before` empty),
   * changed, and removed (`after` empty). Presence follows connections through it.
   */
  membership?: (change: MembershipChange) => void;
  /** Told of every connection opened, closed (with why) and changed (LIFECYCLE_EVENTS_TOPIC). */
  lifecycle?: ConnectionLifecycle | undefined;
  /**
   * The ring was filled from the stream's newest events at start (EVENT_BUFFER_WARMUP): while it has
   * dropped none and is not full, it holds the whole stream (ringHoldsWholeStream).
   */
  warmedUp?: boolean;
  /** The most a connect's `rewind` asks for is taken down to (HISTORY_MAX_LIMIT). */
  maxRewind?: number;
  /** The broker's tail, for a rewind further back than the ring holds (HISTORY_BROKER_SCAN). */
  rewindTail?: BrokerTailOptions | undefined;
  /** The newest event per type and field value of LATEST_EVENT_TYPES, for `latest` connects. */
  latest?: LatestValues | undefined;
  /** How long and how many kills are remembered for connects admitted meanwhile (recent-kills.ts). */
  killMemory?: RecentKillsOptions | undefined;
  /**
   * Looks a session up in the blacklist and kills it when found: for a connection whose admission
   * began before the store watch was cut off and listened again (recent-kills.ts).
   */
  lookUpKill?: ((sessionId: string) => void) | undefined;
}

export interface MembershipChange {
  connectionId: string;
  sessionId: string | undefined;
  user: string | undefined;
  before: readonly Subscription[];
  after: readonly Subscription[];
}

/** What came with a subscription change besides the list (Hub.setSubscriptions). */
export interface ChangeSource {
  sessionId?: string | undefined;
  expiresAt?: number | undefined;
  jwtSubscriptions?: Subscription[] | undefined;
}

export class Hub {
  readonly ring: EventRing;
  readonly replay: StreamReplay | undefined;
  readonly index: SubscriptionIndex<Connection>;
  /**
   * Each connection held, by id, with what the connections API shows of it (connection-facts.ts):
   * one entry, not a map for each (a Map entry is ~70 B of a connection's ~6 KB of heap).
   */
  private readonly connections = new Map<string, HeldConnection>();
  private readonly sessions = new Map<string, Set<Connection>>();
  private readonly catchUp: CatchUp;
  /** When each connection's JWT (or connect hook grant) expires: it ends then (gw.session_expired). */
  private readonly expiries = new ExpiryWheel<Connection>((due) => this.expire(due));
  private readonly metrics: HubMetrics;
  private readonly aheadGraceMs: number;
  private readonly fanout: FanoutSource | undefined;
  private readonly membership: HubOptions['membership'];
  private readonly lifecycle: ConnectionLifecycle | undefined;
  /** The types the fan-out subscription reads, with interest routing (long polls tell it theirs). */
  readonly interest: FanoutInterest | undefined;
  /** Rewinds and latest values of new connections (connection-start.ts). */
  private readonly start: ConnectionStart;
  private readonly latest: LatestValues | undefined;
  private readonly kills: RecentKills;
  private readonly lookUpKill: ((sessionId: string) => void) | undefined;

  constructor(options: HubOptions) {
    this.ring = options.ring;
    this.replay = options.replay;
    this.interest = options.interest;
    this.index = new SubscriptionIndex(options.extractors, options.interest, options.patternLimits);
    this.metrics = options.metrics;
    this.aheadGraceMs = options.aheadGraceMs ?? 5000;
    this.fanout = options.fanout;
    this.membership = options.membership;
    this.lifecycle = options.lifecycle;
    this.latest = options.latest;
    this.kills = new RecentKills(options.killMemory ?? { keepMs: 60_000, maxSessions: 100_000 });
    this.lookUpKill = options.lookUpKill;
    this.catchUp = new CatchUp({
      ring: this.ring,
      replay: this.replay,
      maxUnreadBytes: options.maxUnreadBytes ?? 4 * 1024 * 1024,
      // The type first: an event kept unread that the connection does not subscribe to stays unread.
      matches: (conn, e) =>
        this.index.subscribes(conn, e.type) && this.index.matches(conn, e.event as { type: string }),
      covers: (conn, position) => this.covers(this.index.typesOf(conn), position),
      resync: (conn, from, reason) => this.resyncOwn(conn, from, reason),
      closeSlow: (conn) => {
        if (this.close(conn, 'slow_consumer')) this.metrics.slowConsumerClosed(conn.transport);
      },
      closeUnavailable: (conn) => this.close(conn, 'unavailable'),
      expectAhead: (conn, b) => this.expectAhead(conn, b),
      resumed: (source) => this.metrics.resumed(source),
    });
    this.start = new ConnectionStart({
      ring: this.ring,
      catchUp: this.catchUp,
      index: this.index,
      covers: (types, position) => this.covers(types, position),
      resume: (conn, from) => this.resume(conn, from),
      close: (conn) => this.close(conn, 'unavailable'),
      maxRewind: options.maxRewind ?? 100,
      warmedUp: options.warmedUp ?? false,
      tail: options.rewindTail,
      latest: options.latest,
    });
  }

  /** Connections written at their own place rather than live (resuming, or reading slowly). */
  get behind(): number {
    return this.catchUp.size;
  }

  get size(): number {
    return this.connections.size;
  }

  /**
   * Registers a connection and sends the welcome events (`token` in the first: the connection keeps
   * no copy, it is sent once); with `resumeFrom`, then the events after that position that match, or
   * `gw.resync_required` when the position is no longer held; without it but with `rewind`, the last
   * `rewind` events it matches first (rewind-start.ts), then live.
   */
  add(
    conn: Connection,
    subs: Subscription[],
    welcome: {
      token: string;
      resumeFrom?: string | undefined;
      expiresAt?: number | undefined;
      /** The connect hook's `data`, sent in `gw.connection.create`. */
      data?: unknown;
      /** The last this many events it matches come first (unless it resumes). */
      rewind?: number | undefined;
      /** The newest kept event of each place it subscribes to comes first (unless it resumes or rewinds). */
      latest?: boolean | undefined;
      /** Its ack session, told in `gw.connection.create`. */
      ack?: AckWelcome | undefined;
      /** When its admission's checks began (connection-gate.ts): a kill of its session heard since ends it. */
      checkedFrom?: number | undefined;
    },
    about: ConnectionAbout = {},
  ): void {
    const { token, resumeFrom, expiresAt } = welcome;
    if (this.killedWhileAdmitted(conn, welcome.checkedFrom)) return;
    this.index.set(conn, subs, about.remoteAddress);
    if (expiresAt !== undefined) this.expiries.set(conn, expiresAt);
    this.connections.set(conn.id, new HeldConnection(conn, about, subs, expiresAt));
    this.joinSession(conn);
    this.metrics.connectionOpened(conn.transport, this.index.size);
    this.tellMembership(conn, about.user, [], subs);
    this.lifecycle?.opened(this.snapshot(conn)!);
    // A resuming client's welcome carries its own position: it has nothing after it yet.
    const welcomeAt = resumeFrom ?? this.ring.place;
    this.sendWelcome(conn, [
      connectionCreated(token, welcome.data, welcomeAt, welcome.ack),
      subscriptionsSet(subs, welcomeAt),
    ]);
    if (!this.holds(conn)) return;
    if (conn.sessionId !== undefined && this.storeWatchCutWhileAdmitted(welcome.checkedFrom))
      this.lookUpKill?.(conn.sessionId);
    if (resumeFrom !== undefined) this.resume(conn, resumeFrom);
    else if (welcome.rewind) this.start.rewind(conn, welcome.rewind);
    else if (welcome.latest) this.start.latest(conn, subs);
  }

  /**
   * Whether the ring holds every event of the stream (connection-start.ts): history and rewinds
   * need the broker for nothing older then.
   */
  ringHoldsWholeStream(): boolean {
    return this.start.ringHoldsWholeStream();
  }

  /** A long poll's latest values, those its stream part after `cursor` does not carry (connection-start.ts). */
  latestAt(subscriptions: Subscription[], cursor: string, after?: string): Promise<LatestValue[]> {
    return this.start.latestAt(subscriptions, cursor, after);
  }

  /** A long poll's rewind, as the cursor it starts at (connection-start.ts). */
  rewindCursor(subscriptions: Subscription[], n: number): Promise<string | undefined> {
    return this.start.rewindCursor(subscriptions, n);
  }

  /** Forgets a connection that ended; `reason` says why (its client went away unless told otherwise). */
  remove(conn: Connection, reason: EndReason = 'client_closed'): void {
    const facts = this.connections.get(conn.id);
    if (facts?.conn !== conn) return;
    if (this.lifecycle) this.lifecycle.closed(this.snapshot(conn)!, reason);
    this.connections.delete(conn.id);
    this.tellMembership(conn, facts.user, facts.subscriptions, []);
    this.catchUp.forget(conn);
    this.expiries.delete(conn);
    this.index.remove(conn);
    this.leaveSession(conn);
    this.metrics.connectionClosed(conn.transport, this.index.size);
  }

  get(id: string): Connection | undefined {
    return this.connections.get(id)?.conn;
  }

  /** The connections held now (a copy). */
  held(): Connection[] {
    return Array.from(this.connections.values(), (h) => h.conn);
  }

  /** What the connections API shows of a connection held now (connection-facts.ts). */
  factsOf(id: string): ConnectionFacts | undefined {
    return this.connections.get(id);
  }

  /** Whether `conn` itself is held (not only a connection of its id). */
  private holds(conn: Connection): boolean {
    return this.connections.get(conn.id)?.conn === conn;
  }

  /** What a lifecycle event tells of a held connection. */
  private snapshot(conn: Connection): ConnectionSnapshot | undefined {
    const facts = this.connections.get(conn.id);
    if (!facts) return undefined;
    return {
      id: conn.id,
      transport: conn.transport,
      user: facts.user,
      sessionId: conn.sessionId,
      subscriptions: facts.subscriptions,
      connectedAt: facts.connectedAt,
    };
  }

  /** Whether a held connection is written at its own place rather than live (catch-up.ts). */
  isBehind(conn: Connection): boolean {
    return this.catchUp.get(conn) !== undefined;
  }

  /** The sessions of the connections held now. */
  sessionIds(): string[] {
    return [...this.sessions.keys()];
  }

  /** Closes a connection this replica still holds; false when it is already gone. */
  close(conn: Connection, reason: CloseReason): boolean {
    if (!this.holds(conn)) return false;
    // Forgotten first: a transport's close forgets the connection too, as if its client had left.
    this.remove(conn, reason);
    conn.close(reason);
    return true;
  }

  /**
   * Replaces a held connection's subscriptions; false when this replica does not hold it. With
   * `expiresAt` (the change came with a JWT), the connection now ends when that JWT expires; with
   * `jwtSubscriptions` (a client's change, its JWT read again), they are its JWT-inferred part now,
   * and what the connect hook gave it is added back.
   */
  setSubscriptions(id: string, given: Subscription[], from: ChangeSource = {}): boolean {
    const facts = this.connections.get(id);
    if (!facts) return false;
    const { conn } = facts;
    const { sessionId } = from;
    const { subscriptions: subs, jwtSubscriptions } = withGrant(given, from, facts);
    // A fresh JWT moves the end to its expiry, but not past the connect hook's.
    const expiresAt =
      from.expiresAt === undefined ? undefined : Math.min(from.expiresAt, facts.endsBy ?? Infinity);
    this.index.set(conn, subs, facts.remoteAddress);
    // A type added while it catches up from the ring: the ring may lack that type's events.
    this.catchUp.recheck(conn);
    if (expiresAt !== undefined) this.expiries.set(conn, expiresAt);
    const before = facts.subscriptions;
    facts.subscriptions = subs;
    if (expiresAt !== undefined) facts.expiresAt = expiresAt;
    if (jwtSubscriptions !== undefined) facts.jwtSubscriptions = jwtSubscriptions;
    if (sessionId !== undefined && sessionId !== conn.sessionId) {
      // Its session is the one of the JWT it holds now (a renewal's new `jti`, or another one): a
      // kill of that session ends it. As a new member it leaves as the one it was and joins anew.
      this.tellMembership(conn, facts.user, before, []);
      this.leaveSession(conn);
      conn.sessionId = sessionId;
      this.joinSession(conn);
      this.tellMembership(conn, facts.user, [], subs);
    } else this.tellMembership(conn, facts.user, before, subs);
    this.metrics.subscriptionsChanged(this.index.size);
    // A client's change re-reads its JWT (jwtSubscriptions comes with it); an operator's does not.
    if (this.lifecycle) this.lifecycle.changed(this.snapshot(conn)!, changeCause(from));
    this.sendOwn(conn, subscriptionsSet(subs));
    return true;
  }

  /**
   * One of the hub's own events to every connection here that subscribes to it (a presence
   * change): `body` is what subscriptions match, `out` what is written. Answers how many got it.
   */
  deliverOwn(body: { type: string }, out: OutgoingEvent): number {
    let delivered = 0;
    this.index.match(body, (conn) => {
      this.sendOwn(conn, out);
      delivered++;
    });
    return delivered;
  }

  /**
   * Sends `gw.session_killed` to every connection of the session and closes them; a connect of the
   * session still being admitted is ended when it is added (recent-kills.ts).
   */
  killSession(sessionId: string): number {
    this.kills.heard(sessionId);
    return this.killHeld(sessionId, [...(this.sessions.get(sessionId) ?? [])]);
  }

  /** The store watch listens again after a cut: a rescan looks up the sessions held (kill-rescan.ts). */
  storeWatchResumed(): void {
    this.kills.watchResumed();
  }

  /**
   * A connection being added whose blacklist read may have missed a kill of its session (its checks
   * began before the kill was heard): told `gw.session_killed` and closed instead, true.
   */
  private killedWhileAdmitted(conn: Connection, checkedFrom: number | undefined): boolean {
    const { sessionId } = conn;
    if (sessionId === undefined || checkedFrom === undefined) return false;
    if (!this.kills.killedSince(sessionId, checkedFrom)) return false;
    this.sendOwn(conn, sessionKilled(sessionId));
    conn.close('session_killed');
    this.metrics.sessionKilled(1);
    return true;
  }

  /**
   * Whether the store watch was cut off and listened again since a connection's checks began: a
   * kill written meanwhile was never heard, so it is looked up once the connection is held.
   */
  private storeWatchCutWhileAdmitted(checkedFrom: number | undefined): boolean {
    return checkedFrom !== undefined && this.kills.resumedSince(checkedFrom);
  }

  private killHeld(sessionId: string, conns: Connection[]): number {
    for (const conn of conns) {
      this.sendOwn(conn, sessionKilled(sessionId));
      this.remove(conn, 'session_killed');
      conn.close('session_killed');
    }
    if (conns.length) this.metrics.sessionKilled(conns.length);
    return conns.length;
  }

  /**
   * Ends a held connection for an operator (the connections API): `gw.connection_closed` with the
   * reason and the reconnect advice, then the transport's close for it. False when it is gone already.
   */
  disconnect(conn: Connection, reason: string, reconnect: boolean): boolean {
    if (!this.holds(conn)) return false;
    this.sendOwn(conn, connectionClosed(reason, reconnect));
    return this.close(conn, reconnect ? 'reconnect_advised' : 'disconnected');
  }

  /**
   * One event from the fan-out stream: remember it, then deliver it to every matching connection.
   * Returns it as read, or undefined when it is not a CloudEvent the hub can read or is one the ring
   * holds already (same source and id: a source message taken in twice), which nobody gets again.
   */
  dispatch(position: string, json: string): RingEvent | undefined {
    const e = readStreamEvent(position, json);
    if (typeof e === 'string' || !this.ring.pushNew(e)) {
      this.metrics.eventDropped(typeof e === 'string' ? e : 'duplicate');
      return undefined;
    }
    const seq = this.ring.end - 1;
    this.latest?.keep(e);
    const out: OutgoingEvent = { type: e.type, json: e.json, position };
    const delivered =
      this.fanout !== undefined && isTracingActive()
        ? traceDelivery(this.fanout, e.event, () => this.deliver(e.event as { type: string }, out, seq))
        : this.deliver(e.event as { type: string }, out, seq);
    this.metrics.eventDispatched(e.type, delivered);
    return e;
  }

  /** An event from before this replica went live (ring warm-up): kept for resumes, sent to nobody. */
  remember(position: string, json: string): void {
    const e = readStreamEvent(position, json);
    if (typeof e !== 'string') this.ring.pushNew(e);
  }

  /**
   * Whether an event of `type` must be read when it comes: a connection here subscribes to the type
   * (whatever its subscription's fields), or deliveries are traced (every event is one span, under
   * the trace context its body carries, an event nobody here wants too).
   */
  wants(type: string): boolean {
    return this.index.has(type) || (this.fanout !== undefined && isTracingActive());
  }

  /**
   * An event known from its record's headers alone (type, source and id) that no connection here
   * wants (`live`), or one from the warm-up: kept unread in the ring for the resumes that may reach
   * it (read then, unread-event.ts), sent to nobody, counted as forwarded with no delivery.
   * Undefined when the ring holds one with its source and id already (a duplicate, as in dispatch).
   */
  keepUnread(
    position: string,
    body: Buffer,
    headers: StreamEventHeaders,
    live: boolean,
  ): RingEvent | undefined {
    const e = new UnreadEvent(position, body, headers);
    if (!this.ring.pushNew(e)) {
      if (live) this.metrics.eventDropped('duplicate');
      return undefined;
    }
    if (live) this.metrics.eventKeptUnread(e.type);
    if (live && this.latest?.keeps(e.type)) this.latest.keep(e);
    return e;
  }

  /** Closes every connection (shutdown); clients reconnect elsewhere and resume with their last id. */
  closeAll(): void {
    for (const conn of this.held()) this.close(conn, 'shutdown');
    this.expiries.close();
  }

  /** Connections whose JWT has expired: told so, then closed. */
  private expire(due: Connection[]): void {
    for (const conn of due) {
      if (!this.holds(conn)) continue;
      this.sendOwn(conn, sessionExpired(Date.now()));
      this.close(conn, 'session_expired');
    }
    this.metrics.connectionsExpired(due.length);
  }

  /**
   * Writes the event to every matching live connection; one that is behind gets it in its turn. A
   * connection that says it is full after it falls behind. Answers how many were written to.
   */
  private deliver(event: { type: string }, out: OutgoingEvent, seq: number): number {
    let delivered = 0;
    this.index.match(event, (conn) => {
      if (this.catchUp.size !== 0) {
        const b = this.catchUp.get(conn);
        if (b) return this.catchUp.queued(conn, b, out);
      }
      if (!conn.send(out)) this.catchUp.fellBehind(conn, out.position, seq + 1);
      delivered++;
    });
    return delivered;
  }

  /**
   * The ring's events after `from` when it holds all of them (of `types`, with interest routing):
   * `from` is held, or lies between the oldest and the newest event held. Undefined otherwise
   * (older, newer, malformed, a type not read here since then).
   */
  eventsAfter(from: string, types: Iterable<string> = []): RingEvent[] | undefined {
    if (!this.covers(types, from) || this.epochChanged(from)) return undefined;
    return this.ring.after(from) ?? this.withinRing(from);
  }

  /** Whether every event of `types` after `position` reaches this replica (always, without routing). */
  covers(types: Iterable<string>, position: string): boolean {
    if (this.interest === undefined) return true;
    return this.wellFormed(position) && this.interest.covers(types, position);
  }

  /**
   * Serves a resume from the ring when it holds everything after `from`, else from the broker. A
   * position of another epoch than the stream's now shares no history with it: resync.
   */
  private resume(conn: Connection, from: string): void {
    const wellFormed = this.wellFormed(from);
    if (wellFormed && this.epochChanged(from)) this.resyncOwn(conn, from, 'epoch-changed');
    else if (!this.catchUp.resume(conn, from, wellFormed))
      this.resyncOwn(conn, from, wellFormed ? 'retention-gap' : 'unknown-position');
  }

  /**
   * Whether `position` carries another epoch than the stream this replica reads now (the one of its
   * newest event, or of its origin): the topic was created anew since. False where either carries
   * none (positions from before epochs, buses without them) or is malformed.
   */
  epochChanged(position: string): boolean {
    const place = this.ring.place;
    if (!this.replay || place === undefined) return false;
    try {
      const epoch = this.replay.epochOf(position);
      const now = this.replay.epochOf(place);
      return epoch !== undefined && now !== undefined && epoch !== now;
    } catch {
      return false;
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

  /**
   * A floor beyond every event this replica has seen: a client that was on a replica ahead of this
   * one, or a position the stream never had. Once the grace has passed without the stream
   * reaching it, it counts as unknown.
   */
  private expectAhead(conn: Connection, b: Behind): void {
    const timer = setTimeout(() => {
      if (this.catchUp.get(conn) === b && b.floor !== undefined && !this.replay!.reached(b.floor)) {
        this.catchUp.forget(conn);
        this.resyncOwn(conn, b.floor, 'unknown-position');
      }
    }, this.aheadGraceMs);
    timer.unref();
  }

  private resyncOwn(conn: Connection, from: string, reason: ResyncReason): void {
    this.metrics.resumed('resync');
    this.sendOwn(conn, resyncRequired(from, reason));
  }

  /**
   * Gateway-made events carry the position the connection is at (the stream head once it is live),
   * so a client that resumes from one continues where it was. They are written at once, also to a
   * connection that is behind.
   */
  private sendOwn(conn: Connection, e: OutgoingEvent, at?: string): void {
    const b = this.catchUp.get(conn);
    const position = b?.at ?? at ?? this.ring.place;
    // An event made at its position (the welcome pair) goes as it is; one sent to several
    // connections (a presence change) is copied with each one's position.
    const more = conn.send(e.position === position ? e : { ...e, position });
    if (b) this.catchUp.wroteOwn(conn, b, more);
    else if (!more && this.holds(conn)) this.catchUp.fellBehind(conn, position, this.ring.end);
  }

  /**
   * The welcome pair, made at the position it is sent at, to a connection just added (not behind):
   * one write where the transport can frame both as one (a new connection's largest cost after
   * node's own), each as sendOwn otherwise.
   */
  private sendWelcome(conn: Connection, pair: OutgoingEvent[]): void {
    if (conn.sendAll === undefined || this.catchUp.get(conn) !== undefined) {
      for (const e of pair) this.sendOwn(conn, e, e.position);
      return;
    }
    const more = conn.sendAll(pair);
    if (!more && this.holds(conn)) this.catchUp.fellBehind(conn, pair[0]!.position, this.ring.end);
  }

  private tellMembership(
    conn: Connection,
    user: string | undefined,
    before: readonly Subscription[],
    after: readonly Subscription[],
  ): void {
    this.membership?.({ connectionId: conn.id, sessionId: conn.sessionId, user, before, after });
  }

  private leaveSession(conn: Connection): void {
    if (conn.sessionId === undefined) return;
    const set = this.sessions.get(conn.sessionId);
    set?.delete(conn);
    if (set?.size === 0) this.sessions.delete(conn.sessionId);
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

/** A client's change (its JWT read again) keeps what the connect hook gave, as it keeps its JWT's. */
function withGrant(
  given: Subscription[],
  from: ChangeSource,
  facts: ConnectionFacts | undefined,
): { subscriptions: Subscription[]; jwtSubscriptions: Subscription[] | undefined } {
  if (from.jwtSubscriptions === undefined) return { subscriptions: given, jwtSubscriptions: undefined };
  const change = { subscriptions: given, jwtSubscriptions: from.jwtSubscriptions };
  return keepGranted(change, facts?.grantedSubscriptions);
}

function changeCause(from: ChangeSource): ChangeCause {
  return from.jwtSubscriptions !== undefined ? 'client' : 'operator';
}
