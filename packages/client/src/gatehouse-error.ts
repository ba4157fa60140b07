/**
 * A failure the client reports, with a code to branch on (the message is for people and may change):
 * - `listener_failed`: a listener of the client threw; the error is its `cause`. The event was
 *   delivered all the same (the other listeners got it, the position moved on), as a browser's
 *   EventTarget goes on past a listener that throws.
 */
export type GatehouseErrorCode = 'listener_failed';

export class GatehouseError extends Error {
  readonly code: GatehouseErrorCode;

  constructor(code: GatehouseErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GatehouseError';
    this.code = code;
  }
}
