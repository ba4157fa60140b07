/**
 * What the hub keeps of a connection for the connections API, beyond what delivery needs: who it is
 * (the user of its JWT), where it came from, since when, what it subscribed to and when its JWT
 * ends. Kept apart from the connection objects, which the transports make and the index holds, so
 * that delivery code never touches it; it costs a small object per connection (its subscription list
 * is the one the connect resolved, shared, not copied).
 */
import type { Subscription } from '../subscriptions/index.ts';

/** What a transport tells the hub about a connection it adds. */
export interface ConnectionAbout {
  /** The user name of the JWT it was admitted with (JWT_USER_FIELD). */
  user?: string | undefined;
  /** The client's address, as the per-address budget saw it (TRUSTED_PROXIES applied). */
  remoteAddress?: string | undefined;
  /** The JWT-inferred part of its subscriptions: an operator's change keeps it (one model). */
  jwtSubscriptions?: Subscription[] | undefined;
  /**
   * The connect hook's `expireAt` (ms since the epoch): the latest it may end, whatever JWT a later
   * subscription change brings (a fresh one moves the end to its own expiry, never past this).
   */
  endsBy?: number | undefined;
  /**
   * The subscriptions the connect hook gave it: a client's own change (its JWT read again, its
   * list replaced) keeps them, as it keeps its JWT's.
   */
  grantedSubscriptions?: Subscription[] | undefined;
}

export interface ConnectionFacts extends ConnectionAbout {
  /** When it was added (ms since the Unix epoch). */
  connectedAt: number;
  subscriptions: Subscription[];
  /** When the JWT it was admitted with (or changed to) expires; undefined without one. */
  expiresAt?: number | undefined;
}
