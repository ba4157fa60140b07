/**
 * Redelivery for long-poll connections, which live in the store and are answered by any replica:
 * what ack-watch.ts keeps in memory is kept in the connection's record instead, and looked at when
 * the connection polls. An answer that carries stream events starts the clock (unless it runs); a
 * poll after ACK_TIMEOUT reads the acknowledged position: at the poll's cursor (the last event
 * sent), nothing is pending; past where the clock started, it starts again; else the connection
 * ends (`gw.connection_closed` ack_timeout, reconnect) and its next poll, a new connection, starts
 * after the acknowledged position. A new session keeps the cursor its first connection started at
 * from the connect on.
 */
import type { AckMetrics } from './ack-metrics.ts';
import type { AckPositions } from './ack-positions.ts';
import type { AckSession } from './ack-session.ts';
import type { AckStart } from './ack-start.ts';

/** What a long-poll connection's record keeps of its ack session. */
export interface LongPollAck {
  session: AckSession;
  /** The cursor it started at: given to a session that never acknowledged, when it ends. */
  startedAt: string;
  /** Events were sent after `after` from `since` on (ms) and are not known acknowledged. */
  pending?: { after: string; since: number };
}

export type LongPollAckCheck = { end: true } | { end: false; next?: LongPollAck | undefined };

export interface LongPollAcksDeps {
  positions: Pick<AckPositions, 'read' | 'covers' | 'isAhead' | 'startAt'>;
  /** ACK_TIMEOUT in ms. */
  timeoutMs: number;
  metrics: AckMetrics;
  onError(err: unknown): void;
}

export class LongPollAcks {
  private readonly deps: LongPollAcksDeps;

  constructor(deps: LongPollAcksDeps) {
    this.deps = deps;
  }

  opened(start: AckStart, cursor: string): LongPollAck {
    // As AckWatch.track: a session the store holds no position for keeps where this connection
    // started, so a client gone before its first acknowledgement leaves the events to the next.
    if (start.position === undefined && cursor !== '')
      this.deps.positions.startAt(start.session, cursor).catch(this.deps.onError);
    return { session: start.session, startedAt: cursor };
  }

  /** An answer carried stream events after `from`: the state to keep, undefined when unchanged. */
  sent(ack: LongPollAck, from: string): LongPollAck | undefined {
    if (ack.pending) return undefined;
    return { ...ack, pending: { after: from, since: Date.now() } };
  }

  /** A poll at `cursor`: whether the connection ends so that its events come again. */
  async check(ack: LongPollAck, cursor: string): Promise<LongPollAckCheck> {
    const { pending } = ack;
    if (!pending || Date.now() - pending.since < this.deps.timeoutMs) return { end: false };
    const { positions } = this.deps;
    const acked = await positions.read(ack.session);
    if (positions.covers(acked, cursor)) return { end: false, next: { ...ack, pending: undefined } };
    if (acked !== undefined && positions.isAhead(acked, pending.after))
      return { end: false, next: { ...ack, pending: { after: acked, since: Date.now() } } };
    if (acked === undefined && ack.startedAt !== '')
      await positions.startAt(ack.session, ack.startedAt).catch(this.deps.onError);
    this.deps.metrics.redelivered();
    return { end: true };
  }
}
