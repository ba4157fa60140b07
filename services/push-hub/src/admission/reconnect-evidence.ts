/**
 * Whether a connect is a client coming back rather than a new one, for the connection rate limit
 * (connection-rate-limit.ts): it carries a connection token this gateway issued to a client at the
 * same address (its /64 for IPv6) and that has not expired (any replica's, checked by its MAC), or
 * a resume position this replica's ring holds:
 * the position of an event the stream really had, recently. A made-up position (`0`, `0-0`, one
 * that never comes) is not in the ring, so it counts as a new connection; so does a position
 * older than the ring (it cannot be checked without the broker). A real position reused over and
 * over is bounded by the reconnect budget and the per-address budget.
 *
 * A position past the ring's newest event, of the stream's epoch, waits a moment for this replica
 * to read that far (stream-ahead.ts): the client may come from a replica that reads ahead of this
 * one. It is a reconnect if the ring holds it then; one that never comes counts as new after the
 * wait, and one that comes was a real position by then (the next event's, which anyone can have).
 *
 * The address binding is what a copied token cannot forge: without it, one anonymous connect gave a
 * token that moved every connect from every address of an attacker from the new-connection budget
 * to the ten times larger reconnect one. A client whose address changed (a phone changing networks)
 * comes back as a new connection, admitted while that budget has room; the clients of a replica
 * that died come back from the addresses they had.
 */
import type { ConnectRequest } from './connect-request.ts';
import type { ConnectionTokens } from '../auth/index.ts';
import type { WaitForPosition } from './stream-ahead.ts';

/** The answer at once (a token, a position held or not), or once a position ahead was waited for. */
export type ReconnectCheck = (req: ConnectRequest, clientAddress: string) => boolean | Promise<boolean>;

export function createReconnectCheck(deps: {
  tokens: ConnectionTokens;
  /** Whether the ring holds an event at exactly this position. */
  holds(position: string): boolean;
  /** Waits for a position this replica has not read yet; without it, none is waited for. */
  ahead?: WaitForPosition | undefined;
}): ReconnectCheck {
  return (req, clientAddress) => {
    if (req.connectionToken !== undefined && deps.tokens.issuedTo(req.connectionToken, clientAddress))
      return true;
    const from = req.resumeFrom;
    if (from === undefined) return false;
    if (deps.holds(from)) return true;
    const reached = deps.ahead?.(from);
    return reached === undefined ? false : reached.then(() => deps.holds(from));
  };
}
