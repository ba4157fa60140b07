/**
 * The steps every new connection passes, on every transport, cheapest first, so a connect that is
 * refused costs as little as possible:
 *   0. a place among the connections the replica holds (connection-places.ts), taken by the
 *      transport for what carries the connection (`takePlace`), before the gate: local, no I/O;
 *   1. the per-address budget (address-budget.ts): local, no I/O;
 *   2. whether it is a reconnect (reconnect-evidence.ts): an HMAC or a look-up in the ring (a
 *      position this replica has not read yet waits a moment for it, stream-ahead.ts);
 *   3. the cross-replica rate limit (connection-rate-limit.ts): one store round trip, where a
 *      reconnect counts against its own budget;
 *   4. resolving and authorising its subscriptions: JWT checks, SUBSCRIPTION_CHECK (maybe an
 *      external call). A connect refused here gives its admission back, so the rate limit counts
 *      admitted connections only;
 *   5. the connect hook (CONNECT_CHECK, connect-hook.ts), when there is one: an external call told
 *      what the steps before found (the JWT's claims, the subscriptions), which may refuse the
 *      connect or give it a user, subscriptions, welcome data and an end; refused, it gives its
 *      admission back too.
 * Rejections are counted by reason; an unreachable store or bus is a 503 refusal.
 */
import type { IncomingMessage } from 'node:http';
import { clientAddress } from '@gatehouse/service-kit';
import type { BlockList } from 'node:net';
import type {
  AddressBudget,
  Admission,
  ConnectionPlaces,
  ConnectionRateLimit,
  PlaceOwner,
} from '../limits/index.ts';
import type { TransportKind } from '../connections/index.ts';
import type { ConnectRequest } from './connect-request.ts';
import type { GrantedConnect } from './connect-grant.ts';
import type { ConnectHook } from './connect-hook.ts';
import type { ReconnectCheck } from './reconnect-evidence.ts';
import type { HubMetrics } from '../metrics/index.ts';
import type { AckStart, ReadAckStart } from '../acks/index.ts';
import { type ResolvedSubscriptions, refusalOf, SubscriptionRequestError } from '../subscriptions/index.ts';

/**
 * An admitted connect: its subscriptions, the client address it came from, and what the connect
 * hook gave it (`welcomeData`: the `data` of its welcome event).
 */
export type AdmittedConnect = GrantedConnect & {
  clientAddress: string;
  ack?: AckStart | undefined;
  /**
   * When its checks began (`performance.now()`), before its blacklist read: a kill the hub hears
   * from then on may have raced that read, and ends the connection once it is added (Hub.add).
   */
  checkedFrom: number;
};

/**
 * The admitted connect, or the refusal thrown. At once when no step has to wait (places this
 * replica holds, no JWT, no external check or hook): a reconnect storm's connects then cost no
 * promise and no turn of the microtask queue. A promise (rejected with the refusal) otherwise.
 */
export type ConnectionGate = (
  transport: TransportKind,
  req: ConnectRequest,
  /** The HTTP request the connect came with (its client address). */
  from: IncomingMessage,
) => AdmittedConnect | Promise<AdmittedConnect>;

export interface ConnectionGateDeps {
  addressBudget: AddressBudget;
  trustedProxies: BlockList | undefined;
  resolve(req: ConnectRequest): ResolvedSubscriptions | Promise<ResolvedSubscriptions>;
  rateLimit: ConnectionRateLimit;
  isReconnect: ReconnectCheck;
  metrics: HubMetrics;
  /** CONNECT_CHECK; undefined when unset. */
  connectHook?: ConnectHook | undefined;
  /** Reads where a connect with `ackSession` starts (acks/ack-start.ts). */
  ackStart?: ReadAckStart | undefined;
}

export function createConnectionGate(deps: ConnectionGateDeps): ConnectionGate {
  return (transport, req, from) => {
    const checkedFrom = performance.now();
    try {
      const address = takeAddressBudget(deps, from);
      const evidence = deps.isReconnect(req, address);
      // A resume position this replica has not read yet is waited for (stream-ahead.ts).
      const limited =
        evidence instanceof Promise
          ? evidence.then((back) => deps.rateLimit(back ? 'reconnect' : 'new'))
          : deps.rateLimit(evidence ? 'reconnect' : 'new');
      const pending = { transport, req, from, address, checkedFrom };
      const admitted =
        limited instanceof Promise
          ? limited.then((admission) => admit(deps, pending, admission))
          : admit(deps, pending, limited);
      return admitted instanceof Promise ? admitted.catch((err) => refused(deps, transport, err)) : admitted;
    } catch (err) {
      return refused(deps, transport, err);
    }
  };
}

/** The steps after the rate limit: the subscriptions resolved, then the hook and the ack session, if any. */
function admit(
  deps: ConnectionGateDeps,
  connect: Connect,
  admission: Admission | undefined,
): AdmittedConnect | Promise<AdmittedConnect> {
  if (admission === undefined) throw rateLimited('Reached maximum number of connections.', 1);
  const { req, address } = connect;
  let resolving: ResolvedSubscriptions | Promise<ResolvedSubscriptions>;
  try {
    // The request is read for this connect (connect-request.ts): the address is added to it, not to a copy.
    req.clientAddress = address;
    resolving = deps.resolve(req);
  } catch (err) {
    return refundThenThrow(admission, err);
  }
  const more = deps.connectHook !== undefined || (req.ackSession !== undefined && deps.ackStart);
  if (resolving instanceof Promise || more) return grantLater(deps, connect, admission, resolving);
  return admitted(deps, admission, resolving, connect);
}

/** A connect passing the gate: what it came with, and when its checks began. */
interface Connect {
  transport: TransportKind;
  req: ConnectRequest;
  from: IncomingMessage;
  address: string;
  checkedFrom: number;
}

async function grantLater(
  deps: ConnectionGateDeps,
  connect: Connect,
  admission: Admission,
  resolving: ResolvedSubscriptions | Promise<ResolvedSubscriptions>,
): Promise<AdmittedConnect> {
  const { transport, req, from, address } = connect;
  let resolved: GrantedConnect;
  try {
    resolved = await resolving;
    if (deps.connectHook) {
      const reconnect = admission.kind === 'reconnect';
      resolved = await deps.connectHook({ transport, resolved, clientAddress: address, reconnect, from });
    }
    if (req.ackSession !== undefined && deps.ackStart)
      (resolved as AdmittedConnect).ack = await deps.ackStart(req.ackSession, resolved.claims);
  } catch (err) {
    return refundThenThrow(admission, err);
  }
  return admitted(deps, admission, resolved, connect);
}

/** A connect refused after the rate limit admitted it gives its admission back first. */
async function refundThenThrow(admission: Admission, err: unknown): Promise<never> {
  await admission.refund().catch(() => {});
  throw err;
}

function admitted(
  deps: ConnectionGateDeps,
  admission: Admission,
  resolved: GrantedConnect,
  { address, checkedFrom }: Connect,
): AdmittedConnect {
  deps.metrics.connectAdmitted(admission.kind);
  // The resolver's answer is made for this connect: what the gate knows is added to it, not to a copy.
  const connect = resolved as AdmittedConnect;
  connect.clientAddress = address;
  connect.checkedFrom = checkedFrom;
  return connect;
}

/** Counts a refusal and throws it; an unexpected error is thrown as it is. */
function refused(deps: ConnectionGateDeps, transport: TransportKind, err: unknown): never {
  const refusal = refusalOf(err);
  if (!refusal) throw err;
  deps.metrics.connectionRejected(transport, refusal.reason, refusal.status);
  throw refusal;
}

/**
 * Takes a place for `owner` (what carries the connection: its response, socket or session) from
 * the request's client address; the refusal, counted, when the address or the replica is at its cap.
 */
export function takePlace(
  deps: Pick<ConnectionGateDeps, 'trustedProxies' | 'metrics'> & { places: ConnectionPlaces },
  transport: TransportKind,
  owner: PlaceOwner,
  from: IncomingMessage,
): SubscriptionRequestError | undefined {
  const refusal = deps.places.take(owner, clientAddress(from, deps.trustedProxies));
  if (refusal) deps.metrics.connectionRejected(transport, refusal.reason, refusal.status);
  return refusal;
}

/**
 * The per-address budget alone, for what opens a session before a connect (socket.io's engine
 * handshake): the 429 to answer, or undefined when the address has budget left.
 */
export function handshakeRefusal(
  deps: Pick<ConnectionGateDeps, 'addressBudget' | 'trustedProxies' | 'metrics'>,
  transport: TransportKind,
  from: IncomingMessage,
): SubscriptionRequestError | undefined {
  try {
    takeAddressBudget(deps, from);
    return undefined;
  } catch (err) {
    deps.metrics.connectionRejected(transport, 'rate_limited', 429);
    return err as SubscriptionRequestError;
  }
}

/** Throws the 429 for an address that has spent its budget; returns the address otherwise. */
function takeAddressBudget(
  deps: Pick<ConnectionGateDeps, 'addressBudget' | 'trustedProxies'>,
  from: IncomingMessage,
): string {
  const address = clientAddress(from, deps.trustedProxies);
  const taken = deps.addressBudget.take(address);
  if (!taken.ok) throw rateLimited('Too many connections from this address.', taken.retryAfterSeconds);
  return address;
}

function rateLimited(message: string, retryAfterSeconds: number): SubscriptionRequestError {
  return new SubscriptionRequestError(429, 'rate_limited', message, undefined, {
    'retry-after': String(retryAfterSeconds),
  });
}
