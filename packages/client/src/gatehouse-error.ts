/**
 * A failure the client reports, with a code to branch on (the message is for people and may change):
 * - `listener_failed`: a listener of the client threw; the error is its `cause`. The event was
 *   delivered all the same (the other listeners got it, the position moved on), as a browser's
 *   EventTarget goes on past a listener that throws.
 * - `ack_refused`: the gateway refused an acknowledgement for good (the message says its status
 *   and why: a session beyond its subject's ACK_MAX_SESSIONS_PER_SUBJECT, a position of an older
 *   epoch): what it did not take comes again.
 * - `event_given_up`: with `ack`, an event failed `maxAttempts` times, or more than `maxPending`
 *   were held behind it: counted handled, it will not come again; the event is the `cause`.
 */
export type GatehouseErrorCode = 'listener_failed' | 'ack_refused' | 'event_given_up';

export class GatehouseError extends Error {
  readonly code: GatehouseErrorCode;

  constructor(code: GatehouseErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GatehouseError';
    this.code = code;
  }
}
