/**
 * Whether a connect is a client coming back rather than a new one, for the connection rate limit
 * (connection-rate-limit.ts): it carries a connection token this gateway issued and that has not
 * expired (any replica's, checked by its MAC), or a resume position the fan-out stream could hold:
 * well-formed for the broker and not beyond the newest position this replica has reached. A random
 * or made-up position fails that, so it counts as a new connection; a real position reused over and
 * over is bounded by the reconnect budget itself (MAX_RECONNECTS_PER_MINUTE).
 */
import type { ConnectRequest } from './connect-request.ts';
import type { ConnectionTokens } from './connection-tokens.ts';

export function createReconnectCheck(deps: {
  tokens: ConnectionTokens;
  /** Whether the fan-out stream could hold this position (Hub.couldHold). */
  couldHold(position: string): boolean;
}): (req: ConnectRequest) => boolean {
  return (req) => {
    if (req.connectionToken !== undefined && deps.tokens.read(req.connectionToken) !== undefined) return true;
    return req.resumeFrom !== undefined && deps.couldHold(req.resumeFrom);
  };
}
