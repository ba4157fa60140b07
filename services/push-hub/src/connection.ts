/** A frontend connection held by this hub replica, whatever its transport. */
import type { OutgoingEvent } from './gateway-events.ts';

export type TransportKind = 'sse' | 'ws' | 'socketio' | 'longpolling';
export const TRANSPORTS: readonly TransportKind[] = ['sse', 'ws', 'socketio', 'longpolling'];

/**
 * `shutdown`: this replica is stopping; the client should reconnect (elsewhere) and resume.
 * `unavailable`: a resume could not be served now (broker unreachable); the client should retry.
 */
export type CloseReason = 'session_killed' | 'shutdown' | 'slow_consumer' | 'unavailable';

export interface Connection {
  readonly id: string;
  readonly transport: TransportKind;
  sessionId: string | undefined;
  send(event: OutgoingEvent): void;
  /** Ends the connection; for `session_killed` after `gw.session_killed` was sent. */
  close(reason: CloseReason): void;
}
