/**
 * What every transport reads from a connect request: `jwt` and `subscriptions` query parameters,
 * Bearer tokens from the Authorization header, the position to resume from, and the connection
 * token of the client's previous connection (`connectionToken`), which marks a reconnect for the
 * connection rate limit.
 *
 * One JWT per connect, by the proxy's first-token rule: the first Bearer token of the
 * Authorization header, else the `jwt` parameter. Only it is verified (one signature check per
 * request, however many tokens came) and gives subscriptions and the session.
 */
import type { IncomingMessage } from 'node:http';
import { ackSessionNameProblem } from '../acks/index.ts';
import type { BearerTokens } from '../auth/index.ts';
import { authorizationProblem, badRequest, type SubscriptionRequest } from '../subscriptions/index.ts';

export interface ConnectRequest extends SubscriptionRequest {
  /** SSE `Last-Event-ID` header (or `lastEventId` query parameter for clients that cannot set headers). */
  resumeFrom: string | undefined;
  /** The token of the client's previous connection, when it sends one back. */
  connectionToken: string | undefined;
  /** `rewind`: the last this many events its subscriptions match come first (unless it resumes). */
  rewind: number | undefined;
  /** `latest=true`: the newest kept event of each of its places comes first (unless it resumes or rewinds). */
  latest: boolean;
  /**
   * `ackSession=<name>`: the connection starts after the session's acknowledged position, when the
   * store holds one, and what it is sent is redelivered unless acknowledged in time (acks/).
   */
  ackSession: string | undefined;
}

export function readConnectRequest(req: IncomingMessage, bearerTokens: BearerTokens): ConnectRequest {
  const query = queryOf(req.url ?? '/');
  return fromParams(
    {
      jwt: query.get('jwt') ?? undefined,
      subscriptions: query.get('subscriptions') ?? undefined,
      lastEventId: headerValue(req.headers['last-event-id']) ?? query.get('lastEventId') ?? undefined,
      since: query.get('since') ?? undefined,
      rewind: query.get('rewind') ?? undefined,
      latest: query.get('latest') ?? undefined,
      connectionToken: query.get('connectionToken') ?? undefined,
      ackSession: query.get('ackSession') ?? undefined,
      authorization: req.headers.authorization,
    },
    bearerTokens,
  );
}

export interface ConnectParams {
  jwt: string | undefined;
  subscriptions: unknown;
  lastEventId: string | undefined;
  /**
   * `since`: the position to start after on a first connect (an event's, a history page's). A
   * reconnect's own `lastEventId` is newer and wins.
   */
  since?: string | undefined;
  /** `rewind`, as the client sent it (text, or a number in a socket.io handshake). */
  rewind?: unknown;
  /** `latest`, as the client sent it (`true`/`false`, or a boolean in a socket.io handshake). */
  latest?: unknown;
  connectionToken?: string | undefined;
  /** `ackSession`, as the client sent it (text, or any JSON value in a socket.io handshake). */
  ackSession?: unknown;
  authorization: string | string[] | undefined;
}

/** Builds the request from already extracted parameters (socket.io passes them in its handshake). */
export function fromParams(p: ConnectParams, bearerTokens: BearerTokens): ConnectRequest {
  let headerTokens: string[];
  try {
    headerTokens = bearerTokens(p.authorization);
  } catch (err) {
    throw badRequest(authorizationProblem((err as Error).message));
  }
  const jwt = headerTokens[0] ?? p.jwt;
  return {
    kind: 'connect',
    jwts: jwt ? [jwt] : [],
    headerJwts: headerTokens.slice(0, 1),
    manual: p.subscriptions,
    checkBody: checkBodyOf(p.subscriptions),
    authorization: headerTokens.length === 0 && p.jwt ? `Bearer ${p.jwt}` : headerValue(p.authorization),
    resumeFrom: p.lastEventId || p.since || undefined,
    connectionToken: p.connectionToken || undefined,
    rewind: rewindOf(p.rewind),
    latest: latestOf(p.latest),
    ackSession: ackSessionOf(p.ackSession),
  };
}

/** `ackSession`: a session name (ack-session.ts); absent: undefined. A 400 for anything else. */
function ackSessionOf(given: unknown): string | undefined {
  if (given === undefined) return undefined;
  const problem = ackSessionNameProblem(given);
  if (problem) throw badRequest(`ackSession: ${problem}`);
  return given as string;
}

/** `latest`: true, false or absent (false). A 400 for anything else. */
function latestOf(given: unknown): boolean {
  if (given === undefined || given === false || given === 'false' || given === '') return false;
  if (given === true || given === 'true') return true;
  throw badRequest('latest: expected true or false');
}

/** Events a rewind may name, before the hub takes it down to HISTORY_MAX_LIMIT: a bound on the text. */
const maxRewindText = 1_000_000;

/** `rewind`: a whole number of events (0: none); absent: undefined. A 400 for anything else. */
function rewindOf(given: unknown): number | undefined {
  if (given === undefined || given === '') return undefined;
  const n =
    typeof given === 'number' ? given : /^[0-9]{1,7}$/.test(String(given)) ? Number(given) : Number.NaN;
  if (!Number.isInteger(n) || n < 0 || n > maxRewindText)
    throw badRequest(`rewind: expected a whole number of events from 0 to ${maxRewindText}`);
  return n === 0 ? undefined : n;
}

/**
 * What an external SUBSCRIPTION_CHECK gets for a connect: `{"subscriptions": …}` with the list as
 * the client wrote it (RIG synthesizes the same body from the query parameter); nothing without one.
 */
function checkBodyOf(subscriptions: unknown): (() => string) | undefined {
  if (subscriptions === undefined) return undefined;
  return () => {
    const list = typeof subscriptions === 'string' ? subscriptions : JSON.stringify(subscriptions);
    return `{"subscriptions":${list}}`;
  };
}

/**
 * The query parameters of a request target: what `new URL(target, base).searchParams` gives, without
 * parsing the rest of the URL (a third of a connect's parsing time in a reconnect storm).
 */
export function queryOf(target: string): URLSearchParams {
  const start = target.indexOf('?');
  if (start < 0) return new URLSearchParams();
  const end = target.indexOf('#', start);
  return new URLSearchParams(target.slice(start + 1, end < 0 ? undefined : end));
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(', ') : v;
}
