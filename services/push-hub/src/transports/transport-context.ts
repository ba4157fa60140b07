/** What every transport module is given: the hub core, the connect gate and shared settings. */
import type { IncomingMessage } from 'node:http';
import type { CorsPolicy, Logger } from '@gatehouse/service-kit';
import type { Connection, TransportKind } from '../connections/index.ts';
import type { AdmittedConnect, ConnectionGate } from '../admission/index.ts';
import type { ConnectionPlaces, PlaceOwner } from '../limits/index.ts';
import type { SubscriptionRequestError } from '../subscriptions/index.ts';
import type { BearerTokens, ConnectionTokens } from '../auth/index.ts';
import type { Hub } from '../delivery/index.ts';
import { type AckWatch, welcomeOf } from '../acks/index.ts';

export interface TransportContext {
  hub: Hub;
  gate: ConnectionGate;
  /**
   * The connections held at once (connection-places.ts): a transport takes a place for what
   * carries a connection before the gate, and releases it on that thing's `close`.
   */
  places: ConnectionPlaces;
  /** Takes a place for `owner` from the request's client address; the refusal (counted) at a cap. */
  takePlace(
    transport: TransportKind,
    owner: PlaceOwner,
    req: IncomingMessage,
  ): SubscriptionRequestError | undefined;
  tokens: ConnectionTokens;
  bearerTokens: BearerTokens;
  logger: Logger;
  /** CORS for browser clients (CORS_ALLOWED_ORIGINS). */
  cors: CorsPolicy;
  heartbeatMs: number;
  /**
   * A connection with this much unsent output says it is full (Connection.send); the hub then
   * writes to it again once it has drained, from its ring (catch-up.ts).
   */
  writeHighWater: number;
  /** The SSE `retry:` hint (ms) sent to a client told to reconnect: jittered, so they come back apart. */
  reconnectDelayMs(): number;
  /** The client's address as the per-address budget takes it (TRUSTED_PROXIES applied). */
  addressOf(req: IncomingMessage): string;
  /** Watches what ack-session connections are sent, for redelivery (acks/ack-watch.ts). */
  acks?: Pick<AckWatch, 'track'> | undefined;
}

/**
 * Hands an admitted connection to the hub, with what its admission gave it (the JWT's and the
 * connect hook's): its welcome (token, resume position, end, the hook's data) and what the
 * connections API shows of it. The same for every transport the hub holds.
 */
export function addAdmitted(
  ctx: Pick<TransportContext, 'hub' | 'tokens' | 'acks'>,
  conn: Connection,
  admitted: AdmittedConnect,
  resumeFrom: string | undefined,
  start: { rewind?: number | undefined; latest?: boolean | undefined } = {},
): void {
  const { ack } = admitted;
  // An acknowledged position is where it starts, whatever else the request asked for.
  const acked = ack?.position;
  // Watched before it is added: what the hub sends while adding it (a resume) is pending too.
  if (ack) ctx.acks?.track(conn, ack.session, acked ?? resumeFrom ?? ctx.hub.ring.place, acked !== undefined);
  ctx.hub.add(
    conn,
    admitted.subscriptions,
    {
      token: ctx.tokens.issue(conn.id, admitted.clientAddress),
      resumeFrom: acked ?? resumeFrom,
      rewind: acked === undefined ? start.rewind : undefined,
      latest: acked === undefined ? start.latest : undefined,
      expiresAt: admitted.expiresAt,
      data: admitted.welcomeData,
      ack: ack && welcomeOf(ack),
      checkedFrom: admitted.checkedFrom,
    },
    {
      user: admitted.user,
      remoteAddress: admitted.clientAddress,
      jwtSubscriptions: admitted.jwtSubscriptions,
      endsBy: admitted.endsBy,
      grantedSubscriptions: admitted.grantedSubscriptions,
    },
  );
}
