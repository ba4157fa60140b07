/**
 * A connection the hub holds, and what the connections API shows of it (connection-facts.ts): the
 * value of the hub's one map entry per connection.
 *
 * A class with every field set in its constructor: the record was `{ ...about, conn, … }`, and the
 * fields added after the spread went into a second array of properties that V8 gives an object
 * literal grown past its own slots (with the boxed `connectedAt`, ~64 B a connection).
 */
import type { Connection, ConnectionAbout, ConnectionFacts } from '../connections/index.ts';
import type { Subscription } from '../subscriptions/index.ts';

export class HeldConnection implements ConnectionFacts {
  readonly conn: Connection;
  user: string | undefined;
  remoteAddress: string | undefined;
  jwtSubscriptions: Subscription[] | undefined;
  endsBy: number | undefined;
  grantedSubscriptions: Subscription[] | undefined;
  connectedAt: number;
  subscriptions: Subscription[];
  expiresAt: number | undefined;

  constructor(
    conn: Connection,
    about: ConnectionAbout,
    subscriptions: Subscription[],
    expiresAt: number | undefined,
  ) {
    this.conn = conn;
    this.user = about.user;
    this.remoteAddress = about.remoteAddress;
    this.jwtSubscriptions = about.jwtSubscriptions;
    this.endsBy = about.endsBy;
    this.grantedSubscriptions = about.grantedSubscriptions;
    this.connectedAt = Date.now();
    this.subscriptions = subscriptions;
    this.expiresAt = expiresAt;
  }
}
