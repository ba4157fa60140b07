/** A frontend connection held by this hub replica, whatever its transport. */
import type { OutgoingEvent } from './gateway-events.ts';

export type TransportKind = 'sse' | 'ws' | 'socketio' | 'longpolling';
export const TRANSPORTS: readonly TransportKind[] = ['sse', 'ws', 'socketio', 'longpolling'];

/**
 * `shutdown`: this replica is stopping; the client should reconnect (elsewhere) and resume.
 * `unavailable`: a resume could not be served now (broker unreachable); the client should retry.
 * `session_expired`: the JWT the connection was admitted with has expired; reconnect with a new one.
 * `disconnected`: an operator ended it through the connections API and asks the client not to come
 * back; `reconnect_advised`: the same, but the client should reconnect (elsewhere) and resume.
 * Both come after `gw.connection_closed`, which carries the operator's reason.
 */
export type CloseReason =
  | 'session_killed'
  | 'session_expired'
  | 'shutdown'
  | 'slow_consumer'
  | 'unavailable'
  | 'disconnected'
  | 'reconnect_advised';

export interface Connection {
  readonly id: string;
  readonly transport: TransportKind;
  sessionId: string | undefined;
  /** Events written to it so far, gateway events included (the connections API shows it). */
  readonly eventsWritten: number;
  /** Bytes written to it that have not gone out to the client yet. */
  queuedBytes(): number;
  /**
   * Writes the event. False when the connection's unsent output has reached its high-water mark
   * (TransportContext.writeHighWater): the hub then writes nothing more to it until `whenDrained`
   * calls back, and what it would have written waits in the hub's ring (catch-up.ts).
   */
  send(event: OutgoingEvent): boolean;
  /**
   * Writes events in one go, as `send` each would (the same answer): a transport that can frame
   * them as one write does (SSE: the welcome pair, one chunk). Optional: the hub sends each otherwise.
   */
  sendAll?(events: readonly OutgoingEvent[]): boolean;
  /** Calls `ready` once, when the output the connection had not sent has gone out. */
  whenDrained(ready: () => void): void;
  /** Ends the connection; for `session_killed` after `gw.session_killed` was sent. */
  close(reason: CloseReason): void;
}
