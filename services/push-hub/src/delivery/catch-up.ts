/**
 * Connections the hub does not write live events to, because they are behind: a client resuming
 * from a position (Last-Event-ID, a socket.io offset), or one whose unsent output reached its
 * high-water mark (it reads slower than events come). Each is written from the ring at its own
 * place, with backpressure: a chunk until the connection says it is full, the next once its output
 * has drained. Live events need no queue of their own: every event is in the ring before it is
 * delivered, so they come after the backlog, in order. A place the ring has dropped meanwhile (or
 * never held) is served by a broker replay (stream-replay.ts), which waits for its slow readers in
 * the same way; when the replay reaches the ring, the connection goes on from the ring.
 *
 * The slow-consumer bound (MAX_BUFFERED_BYTES) counts what the client does not read: the bytes of
 * matching events that arrived after it fell behind (or after its backlog was chosen) and were not
 * written yet. The backlog itself is the hub's choice and does not count, so a client coming back
 * to 64 MiB of events catches up, and one that stops reading is cut once that many new bytes
 * wait for it. A connection that is behind holds at most its high-water mark of output.
 *
 * A connection reaching the ring's newest event goes live again. Writing stops after `turnBytes`
 * in one turn of the event loop, so a long backlog does not hold up other connections.
 */
import {
  type Connection,
  type OutgoingEvent,
  type ResyncReason,
  resyncReasonOf,
} from '../connections/index.ts';
import type { EventRing, RingEvent } from './event-ring.ts';
import type { ReplayTarget, StreamReplay } from './stream-replay.ts';

/** Where one connection is in the stream while it is behind. */
export interface Behind {
  /**
   * What the connection has had up to; gateway events carry it as their position. Undefined for a
   * connection that fell behind before the first event of the stream.
   */
  at: string | undefined;
  /** Ring sequence number of the next event to write; undefined while the broker replays for it. */
  next: number | undefined;
  /** The replay sent events up to here (a replica behind its client): live ones up to it are skipped. */
  floor: string | undefined;
  target: ReplayTarget | undefined;
  /** Its output is full: nothing is written until it drains. */
  full: boolean;
  /** A broker replay waiting for it to drain. */
  onDrained: (() => void) | undefined;
  /** Ring sequence number from which matching events count as unread. */
  countFrom: number;
  /** Bytes of matching events from `countFrom` on not yet written to it. */
  unread: number;
  /** Waiting to learn where its rewind starts (broker-tail.ts): nothing is written until then. */
  held?: boolean;
}

export interface CatchUpDeps {
  ring: EventRing;
  replay: StreamReplay | undefined;
  /** Unread bytes beyond which a connection is closed as a slow consumer (MAX_BUFFERED_BYTES). */
  maxUnreadBytes: number;
  /** Bytes written to one connection in one turn of the event loop before the rest waits for the next. */
  turnBytes?: number;
  matches(conn: Connection, e: RingEvent): boolean;
  /** Whether the ring has (or will have) every event after `position` of the types `conn` wants. */
  covers(conn: Connection, position: string): boolean;
  /** The position of `conn` can no longer be served: tell it (`gw.resync_required`) why; it goes live. */
  resync(conn: Connection, from: string, reason: ResyncReason): void;
  closeSlow(conn: Connection): void;
  /** A broker replay failed: the connection is closed so that its client retries. */
  closeUnavailable(conn: Connection): void;
  expectAhead(conn: Connection, b: Behind): void;
  resumed(source: 'ring' | 'broker'): void;
}

export class CatchUp {
  private readonly behind = new Map<Connection, Behind>();
  private readonly deps: CatchUpDeps;
  private readonly turnBytes: number;

  constructor(deps: CatchUpDeps) {
    this.deps = deps;
    this.turnBytes = deps.turnBytes ?? 1024 * 1024;
  }

  get size(): number {
    return this.behind.size;
  }

  get(conn: Connection): Behind | undefined {
    return this.behind.get(conn);
  }

  /**
   * A resume from `from`: from the ring when it holds everything after it, else by a broker replay.
   * Returns false when neither can serve it (then nothing is kept for it).
   */
  resume(conn: Connection, from: string, wellFormed: boolean): boolean {
    const { ring, replay } = this.deps;
    const b = this.track(conn, from, undefined);
    const next = ring.seqAfter(from, wellFormed ? replay?.compare : undefined);
    if (next !== undefined && this.deps.covers(conn, from)) {
      this.deps.resumed('ring');
      b.next = next;
      this.pump(conn, b);
      return true;
    }
    if (replay && wellFormed) {
      this.replayFor(conn, b);
      return true;
    }
    this.behind.delete(conn);
    return false;
  }

  /**
   * A rewind served from the ring: `conn` is written the ring's events from sequence number `seq`
   * on (those it matches), then goes live, as a resume from the event before it would.
   */
  rewind(conn: Connection, seq: number): void {
    const b = this.track(conn, this.deps.ring.get(seq - 1)?.position, undefined);
    b.next = seq;
    this.pump(conn, b);
  }

  /**
   * `conn` waits while its rewind's start is looked up on the broker: live events are counted as
   * unread, not written, so that the rewind (a resume from that start) sends each once.
   */
  hold(conn: Connection): Behind {
    const b = this.track(conn, undefined, undefined);
    b.held = true;
    return b;
  }

  /** Whether `conn` is still held by `b` (not gone, not resumed meanwhile). */
  holds(conn: Connection, b: Behind): boolean {
    return this.behind.get(conn) === b;
  }

  /**
   * `conn` said it is full after the live event at ring sequence `seq`: it goes on from the next
   * one once it has drained.
   */
  fellBehind(conn: Connection, at: string | undefined, seq: number): void {
    const b = this.track(conn, at, seq);
    this.full(conn, b);
  }

  /** A live event for a connection that is behind: counted as unread, written when its turn comes. */
  queued(conn: Connection, b: Behind, e: OutgoingEvent): void {
    b.unread += e.json.length;
    if (b.unread > this.deps.maxUnreadBytes) this.deps.closeSlow(conn);
    else if (!b.full && b.next !== undefined) this.pump(conn, b);
  }

  /** A gateway event written to a connection that is behind said it is full. */
  wroteOwn(conn: Connection, b: Behind, more: boolean): void {
    if (!more && !b.full) this.full(conn, b);
  }

  /**
   * `conn` changed its subscriptions: if it is written from the ring at a place where the ring
   * lacks a type it wants now (interest routing), a broker replay takes over from that place.
   */
  recheck(conn: Connection): void {
    const b = this.behind.get(conn);
    if (!b || b.target || b.next === undefined || b.at === undefined) return;
    if (this.deps.covers(conn, b.at) || !this.deps.replay) return;
    b.next = undefined;
    if (!b.full) this.replayFor(conn, b);
  }

  forget(conn: Connection): void {
    const b = this.behind.get(conn);
    if (!b) return;
    this.behind.delete(conn);
    if (b.target) this.deps.replay?.cancel(b.target);
  }

  private track(conn: Connection, at: string | undefined, countFrom: number | undefined): Behind {
    const b: Behind = {
      at,
      next: countFrom,
      floor: undefined,
      target: undefined,
      full: false,
      onDrained: undefined,
      countFrom: countFrom ?? this.deps.ring.end,
      unread: 0,
    };
    this.behind.set(conn, b);
    return b;
  }

  private full(conn: Connection, b: Behind): void {
    b.full = true;
    conn.whenDrained(() => this.drained(conn, b));
  }

  private drained(conn: Connection, b: Behind): void {
    if (this.behind.get(conn) !== b) return;
    b.full = false;
    if (b.held) return;
    if (b.target) {
      const resume = b.onDrained;
      b.onDrained = undefined;
      resume?.();
    } else if (b.next === undefined) this.replayFor(conn, b);
    else this.pump(conn, b);
  }

  /** Writes from the ring at the connection's place until it is full, the turn's share is spent, or it is live. */
  private pump(conn: Connection, b: Behind): void {
    const { ring, replay } = this.deps;
    let budget = this.turnBytes;
    while (b.next! < ring.end) {
      const seq = b.next!;
      const e = ring.get(seq);
      // Dropped from the ring while the client was reading slowly: the broker has it.
      if (!e) {
        this.fromBroker(conn, b);
        return;
      }
      b.next = seq + 1;
      // Up to the floor, the replay has sent the events already.
      const pastFloor = b.floor === undefined || replay!.compare(e.position, b.floor) > 0;
      if (pastFloor) {
        b.floor = undefined;
        b.at = e.position;
      }
      if (!this.deps.matches(conn, e)) continue;
      if (seq >= b.countFrom) b.unread = Math.max(0, b.unread - e.json.length);
      if (!pastFloor) continue;
      const more = conn.send({ type: e.type, json: e.json, position: e.position });
      // Writing may have ended the connection (its socket was gone).
      if (this.behind.get(conn) !== b) return;
      budget -= e.json.length;
      if (!more) {
        this.full(conn, b);
        return;
      }
      if (budget <= 0) {
        b.full = true;
        setImmediate(() => this.drained(conn, b));
        return;
      }
    }
    if (b.floor === undefined) this.behind.delete(conn);
  }

  /** The ring no longer holds the connection's place: a broker replay from it, or a resync. */
  private fromBroker(conn: Connection, b: Behind): void {
    const { replay } = this.deps;
    if (!replay || b.at === undefined) {
      this.behind.delete(conn);
      this.deps.resync(conn, b.at ?? '', 'retention-gap');
      return;
    }
    b.next = undefined;
    this.replayFor(conn, b);
  }

  private replayFor(conn: Connection, b: Behind): void {
    b.target = this.replayTarget(conn, b);
    this.deps.replay!.request(b.target);
  }

  private replayTarget(conn: Connection, b: Behind): ReplayTarget {
    const catchUp = this;
    const { ring, replay } = this.deps;
    return {
      from: b.at!,
      get wanted() {
        return catchUp.behind.get(conn) === b;
      },
      covers: (position) => this.deps.covers(conn, position),
      event: (e) => {
        b.at = e.position;
        if (this.deps.matches(conn, e) && !conn.send({ type: e.type, json: e.json, position: e.position }))
          this.full(conn, b);
        return true;
      },
      ready: () => (b.full ? new Promise<void>((resolve) => (b.onDrained = resolve)) : undefined),
      detach: () => {
        // The round read on without it: once drained, it asks for a replay from its place again.
        b.target = undefined;
        b.onDrained = undefined;
      },
      caughtUp: (at, _rest, beyondRing) => {
        this.deps.resumed('broker');
        b.target = undefined;
        b.at = at;
        // What the ring holds after `at` is the backlog now: it does not count as unread.
        b.unread = 0;
        b.countFrom = ring.end;
        if (beyondRing) {
          b.floor = at;
          b.next = ring.end;
          if (!replay!.reached(at)) this.deps.expectAhead(conn, b);
        } else b.next = ring.seqAfter(at, replay!.compare) ?? ring.end;
        if (!b.full) this.pump(conn, b);
      },
      unavailable: (err) => {
        this.behind.delete(conn);
        this.deps.resync(conn, b.at!, resyncReasonOf(err));
      },
      failed: () => {
        this.behind.delete(conn);
        this.deps.closeUnavailable(conn);
      },
    };
  }
}
