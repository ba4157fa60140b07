/**
 * Whether a connect is a client coming back rather than a new one, for the connection rate limit
 * (connection-rate-limit.ts): it carries a connection token this gateway issued and that has not
 * expired (any replica's, checked by its MAC), or a resume position this replica's ring holds:
 * the position of an event the stream really had, recently. A made-up position (`0`, `0-0`, one
 * beyond the newest) is not in the ring, so it counts as a new connection; so does a position
 * older than the ring (it cannot be checked without the broker). A real position reused over and
 * over is bounded by the reconnect budget and the per-address budget.
 */
import type { ConnectRequest } from './connect-request.ts';
import type { ConnectionTokens } from './connection-tokens.ts';

export function createReconnectCheck(deps: {
  tokens: ConnectionTokens;
  /** Whether the ring holds an event at exactly this position. */
  holds(position: string): boolean;
}): (req: ConnectRequest) => boolean {
  return (req) => {
    if (req.connectionToken !== undefined && deps.tokens.read(req.connectionToken) !== undefined) return true;
    return req.resumeFrom !== undefined && deps.holds(req.resumeFrom);
  };
}
