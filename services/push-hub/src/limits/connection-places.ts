/**
 * MAX_CONNECTIONS_PER_ADDRESS and MAX_CONNECTIONS: how many connections this replica holds at once,
 * from one client address and in all. The rate limits (address-budget.ts, connection-rate-limit.ts)
 * bound how fast connections come; these bound how many stay, so no client can hold an unbounded
 * share of the replica's memory and open files however slowly it connects.
 *
 * A connection takes a place before anything else is checked (local, no I/O) and holds it for as
 * long as what carries it lives, not the hub's record of it: an SSE response, a WebSocket's socket,
 * a socket.io engine session, a long-poll session polled here lately (longpoll-sightings.ts). Each
 * transport gives the place back on that thing's own `close`, which comes whatever ended it (the
 * client, a kill, an expiry, an error, a slow consumer, shutdown), so a place cannot leak: no path
 * has to remember to release it. Giving a place back twice is harmless.
 *
 * Past the address's cap a connect is refused 429 (the client itself holds too many); past the
 * replica's, 503 (this replica is full, another may not be): both with Retry-After. IPv6 clients
 * are counted per /64 (address-key.ts).
 */
import { addressKey } from '../auth/index.ts';
import { SubscriptionRequestError } from '../subscriptions/index.ts';

export interface ConnectionCaps {
  perAddress: number;
  perReplica: number;
}

/** What holds a place: the object whose `close` gives it back, or a long-poll connection's id. */
export type PlaceOwner = object | string;

/** Seconds a client over its address's cap waits: one of its own connections must end first. */
const addressRetryAfterSeconds = 5;
/** Seconds before a retry when the replica is full: a balancer may send it to another one. */
const replicaRetryAfterSeconds = 2;

export class ConnectionPlaces {
  private readonly caps: ConnectionCaps;
  /** The address key each held place is counted under, by owner. */
  private readonly owners = new Map<PlaceOwner, string>();
  private readonly byAddress = new Map<string, number>();
  private readonly sweepers: Array<() => void> = [];

  constructor(caps: ConnectionCaps) {
    this.caps = caps;
  }

  /**
   * Takes a place for `owner` from `address`; the refusal to answer when a cap is reached. An owner
   * that holds one already keeps it (it is not counted twice).
   */
  take(owner: PlaceOwner, address: string): SubscriptionRequestError | undefined {
    if (this.owners.has(owner)) return undefined;
    for (const sweep of this.sweepers) sweep();
    const key = addressKey(address);
    const held = this.byAddress.get(key) ?? 0;
    if (held >= this.caps.perAddress)
      return refusal(429, 'Too many connections from this address.', addressRetryAfterSeconds);
    if (this.owners.size >= this.caps.perReplica)
      return refusal(503, 'This replica holds all the connections it can.', replicaRetryAfterSeconds);
    this.owners.set(owner, key);
    this.byAddress.set(key, held + 1);
    return undefined;
  }

  /** Hands `from`'s place to `to` (the engine session a handshake opened); false when `from` holds none. */
  move(from: PlaceOwner, to: PlaceOwner): boolean {
    const key = this.owners.get(from);
    if (key === undefined) return false;
    this.owners.delete(from);
    this.owners.set(to, key);
    return true;
  }

  /** Gives `owner`'s place back; nothing when it holds none (any more). */
  release(owner: PlaceOwner): void {
    const key = this.owners.get(owner);
    if (key === undefined) return;
    this.owners.delete(owner);
    const held = this.byAddress.get(key)!;
    if (held <= 1) this.byAddress.delete(key);
    else this.byAddress.set(key, held - 1);
  }

  holds(owner: PlaceOwner): boolean {
    return this.owners.has(owner);
  }

  /** Places held now, from one address or in all. */
  count(address?: string): number {
    for (const sweep of this.sweepers) sweep();
    return address === undefined ? this.owners.size : (this.byAddress.get(addressKey(address)) ?? 0);
  }

  /**
   * Runs before places are counted: a holder that notices lazily that it holds no more (the
   * long-poll sessions not polled within their lifetime) gives those places back first.
   */
  sweepWith(sweep: () => void): void {
    this.sweepers.push(sweep);
  }
}

/** Reason `at_capacity` in gw_connections_rejected_total, apart from the rate limits' `rate_limited`. */
function refusal(status: 429 | 503, message: string, retryAfterSeconds: number): SubscriptionRequestError {
  return new SubscriptionRequestError(status, 'at_capacity', message, undefined, {
    'retry-after': String(retryAfterSeconds),
  });
}
