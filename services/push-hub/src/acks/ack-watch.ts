/**
 * Redelivery: a connection with an ack session whose oldest event not known acknowledged has waited
 * ACK_TIMEOUT is ended, telling its client to reconnect at once (`gw.connection_closed`,
 * `{"reason":"ack_timeout","reconnect":true}`); its next connection starts after the acknowledged
 * position, so the unacknowledged events come again. Per connection it keeps two positions and a
 * time, never the events; one 1 s timer goes over the ack-session connections only, and reads the
 * store only for one whose oldest event is due:
 * - the acknowledged position covers the last event sent: nothing is pending;
 * - it moved past what was pending but not to the last sent: the clock starts again (the events
 *   after it are not known apart, so they get a whole ACK_TIMEOUT from now: conservative);
 * - else the connection ends. A session that never acknowledged anything is given the place its
 *   connection started at first, so that its next connection starts there (not after the client's
 *   last received event, which the store would otherwise leave it to).
 */
import type { Connection } from '../connections/index.ts';
import type { AckMetrics } from './ack-metrics.ts';
import type { AckPositions } from './ack-positions.ts';
import type { AckSession } from './ack-session.ts';

export interface AckWatchDeps {
  positions: Pick<AckPositions, 'read' | 'covers' | 'isAhead' | 'startAt'>;
  /** Whether the hub still holds the connection. */
  holds(conn: Connection): boolean;
  /** Ends it with `gw.connection_closed` (Hub.disconnect). */
  disconnect(conn: Connection, reason: string, reconnect: boolean): void;
  /** ACK_TIMEOUT in ms. */
  timeoutMs: number;
  metrics: AckMetrics;
  onError(err: unknown): void;
  now?: () => number;
}

interface Watched {
  session: AckSession;
  /** Where the connection started (its welcome's position); undefined on an empty stream. */
  startedAt: string | undefined;
  /** The oldest event sent that is not known acknowledged, and since when it waits. */
  pending: { position: string; since: number; passed: 'at' | 'after' } | undefined;
  /** The last event sent. */
  last: string | undefined;
  checking: boolean;
}

export class AckWatch {
  private readonly deps: AckWatchDeps;
  private readonly watched = new Map<Connection, Watched>();
  private readonly timer: NodeJS.Timeout;

  constructor(deps: AckWatchDeps) {
    this.deps = deps;
    this.timer = setInterval(() => this.tick(), 1000);
    this.timer.unref();
  }

  /**
   * Watches what the hub sends `conn` from now on: its `send` is wrapped on this one connection, so
   * the connections without an ack session pay nothing.
   */
  track(conn: Connection, session: AckSession, startedAt: string | undefined, stored = true): void {
    const w: Watched = { session, startedAt, pending: undefined, last: undefined, checking: false };
    // A session the store holds no position for keeps where this connection started, before the
    // client can handle anything: a tab that goes away before its first acknowledgement reached us
    // (killed, offline) leaves its events to the next connection, not a start after them. Once per
    // session: only its first connection finds nothing stored.
    if (!stored && startedAt !== undefined)
      this.deps.positions.startAt(session, startedAt).catch(this.deps.onError);
    this.watched.set(conn, w);
    this.deps.metrics.sessionsConnected(this.watched.size);
    const send = conn.send.bind(conn);
    conn.send = (event) => {
      // The hub's own events carry the place the connection is at, not an event to acknowledge.
      if (!event.own && event.position !== undefined) this.sent(w, event.position);
      return send(event);
    };
  }

  get size(): number {
    return this.watched.size;
  }

  close(): void {
    clearInterval(this.timer);
    this.watched.clear();
  }

  private sent(w: Watched, position: string): void {
    w.last = position;
    w.pending ??= { position, since: this.now(), passed: 'at' };
  }

  private tick(): void {
    const now = this.now();
    for (const [conn, w] of this.watched) {
      if (!this.deps.holds(conn)) {
        this.watched.delete(conn);
        continue;
      }
      if (w.pending && !w.checking && now - w.pending.since >= this.deps.timeoutMs) void this.check(conn, w);
    }
    this.deps.metrics.sessionsConnected(this.watched.size);
  }

  private async check(conn: Connection, w: Watched): Promise<void> {
    w.checking = true;
    try {
      const acked = await this.deps.positions.read(w.session);
      const { pending, last } = w;
      if (!pending || !this.deps.holds(conn)) return;
      if (last !== undefined && this.deps.positions.covers(acked, last)) w.pending = undefined;
      else if (acked !== undefined && this.passed(acked, pending))
        w.pending = { position: acked, since: this.now(), passed: 'after' };
      else {
        if (acked === undefined && w.startedAt !== undefined)
          // Refused (the subject's sessions at their bound): it is ended all the same.
          await this.deps.positions.startAt(w.session, w.startedAt).catch(this.deps.onError);
        this.redeliver(conn);
      }
    } catch (err) {
      // The store down: the connection stays (it can do nothing better); looked at again next tick.
      this.deps.onError(err);
    } finally {
      w.checking = false;
    }
  }

  private passed(acked: string, pending: NonNullable<Watched['pending']>): boolean {
    const { positions } = this.deps;
    return pending.passed === 'at'
      ? positions.covers(acked, pending.position)
      : positions.isAhead(acked, pending.position);
  }

  private redeliver(conn: Connection): void {
    this.watched.delete(conn);
    this.deps.metrics.redelivered();
    this.deps.disconnect(conn, 'ack_timeout', true);
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }
}
