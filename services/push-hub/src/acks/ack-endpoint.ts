/**
 * `POST /_gw/v1/ack` with `{"session":"inbox","position":"…"}` and a JWT, either in
 * `Authorization: Bearer <jwt>` or as the body's `token` (one of the two): the session of the JWT's
 * subject handled everything up to and including `position`. Any replica answers it (it writes the
 * store only). 204 when recorded (or when not ahead of the stored one); 400 for a bad body, session
 * name, position or JWT (the JWT as GET /_gw/v1/history answers it), or a JWT sent twice; 401
 * without a JWT; 409 for a position of another epoch or past the stream's head, or a new session
 * past ACK_MAX_SESSIONS_PER_SUBJECT; 413 past ACK_MAX_BODY_BYTES (the body's `token` not counted: it
 * is bounded by MAX_HEADER_VALUE_LENGTH, as in a header); 415 for a body that is neither
 * `application/json` nor `text/plain`; 429 with Retry-After past ACK_REQUESTS_PER_ADDRESS_PER_MINUTE
 * per client address (taken first, before the body or the JWT is read), ACK_REQUESTS_PER_MINUTE per
 * session or ACK_REQUESTS_PER_SUBJECT_PER_MINUTE per subject on this replica; 503 with Retry-After
 * when the store is down.
 * Browsers send it with `keepalive` on `pagehide`, as a CORS-safelisted request (a `text/plain` body
 * carrying the token, no Authorization header): one that needs a preflight is dropped with the page
 * when the page closes before the preflight is answered (Chromium). A cookie is never read, so a
 * request another site makes the browser send carries no credential of the user's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type CorsPolicy,
  HttpError,
  type PreflightRules,
  readBody,
  requestPath,
  sendText,
  unavailableHeaders,
} from '@gatehouse/service-kit';
import type { BearerTokens, HubAuth } from '../auth/index.ts';
import { authorizationProblem, badRequestOf, refusalOf } from '../subscriptions/index.ts';
import type { AckMetrics } from './ack-metrics.ts';
import { resultOf } from './ack-metrics.ts';
import type { AckPositions } from './ack-positions.ts';
import { type AckSession, ackSessionNameProblem, ackSessionOf } from './ack-session.ts';

export const ACK_PATH = '/_gw/v1/ack';

const preflight: PreflightRules = { methods: 'POST', headers: 'authorization, content-type' };

export interface AckEndpointDeps {
  positions: AckPositions;
  auth: Pick<HubAuth, 'verify'>;
  bearerTokens: BearerTokens;
  /** ACK_REQUESTS_PER_ADDRESS_PER_MINUTE per client address (limits/address-budget.ts). */
  addressBudget: Budget;
  /** The client's address (TRUSTED_PROXIES applied). */
  addressOf(req: IncomingMessage): string;
  /** ACK_REQUESTS_PER_MINUTE per session key (limits/address-budget.ts). */
  sessionBudget: Budget;
  /**
   * ACK_REQUESTS_PER_SUBJECT_PER_MINUTE per subject: session names cost nothing to make up, so
   * the session's budget alone bounds nothing for a client that names a new one in every ack.
   */
  subjectBudget: Budget;
  /** ACK_MAX_BODY_BYTES: the body but for its `token`. */
  maxBodyBytes: number;
  /** The body's `token`, bounded as the Authorization header's value is (MAX_HEADER_VALUE_LENGTH). */
  maxTokenBytes: number;
  cors: CorsPolicy;
  metrics: AckMetrics;
  /** Why a JWT was refused, for the log: the caller is told only `invalid JWT`. */
  onJwtRefused?: (reason: string) => void;
}

interface Budget {
  take(key: string): { ok: true } | { ok: false; retryAfterSeconds: number };
}

/** An HttpError with the headers its answer carries (Retry-After, WWW-Authenticate). */
class AckRefusal extends HttpError {
  readonly headers: Record<string, string>;
  constructor(status: number, message: string, headers: Record<string, string>) {
    super(status, message);
    this.headers = headers;
  }
}

interface AckBody {
  session: string;
  position: string;
  /** The JWT, when the body carries it (no Authorization header: no CORS preflight). */
  token?: string;
}

export function createAckEndpoint(deps: AckEndpointDeps) {
  async function post(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const cors = deps.cors.headers(req);
    try {
      take(deps.addressBudget, deps.addressOf(req), 'from this address');
      if (!carriesJson(req.headers['content-type']))
        throw new HttpError(
          415,
          'Expected a JSON body (content-type application/json, or text/plain as browsers send it without a preflight).',
        );
      const header = firstBearer(deps.bearerTokens, req.headers.authorization);
      const body = await readBounded(req);
      const session = await sessionOf(jwtOf(header, body.token), body.session, body.token !== undefined);
      take(deps.sessionBudget, `${session.subject}/${session.name}`, 'for this session');
      take(deps.subjectBudget, session.subject, 'for this subject');
      deps.metrics.acknowledged(await deps.positions.advance(session, body.position));
      res.writeHead(204, cors);
      res.end();
    } catch (err) {
      refuse(res, err, cors);
    }
  }

  /**
   * The body, read up to ACK_MAX_BODY_BYTES and a token's bound: a JWT of an identity provider is
   * often past ACK_MAX_BODY_BYTES alone, and bounded as a header value when it comes in one.
   */
  async function readBounded(req: IncomingMessage): Promise<AckBody> {
    const bytes = await readBody(req, deps.maxBodyBytes + deps.maxTokenBytes);
    const body = readAck(bytes.toString('utf8'));
    const tokenBytes = body.token === undefined ? 0 : Buffer.byteLength(body.token);
    if (tokenBytes > deps.maxTokenBytes)
      throw new HttpError(413, `token: longer than the limit of ${deps.maxTokenBytes} bytes`);
    if (bytes.length - tokenBytes > deps.maxBodyBytes)
      throw new HttpError(413, `request body exceeds the limit of ${deps.maxBodyBytes} bytes`);
    return body;
  }

  async function sessionOf(jwt: string, name: string, inBody: boolean): Promise<AckSession> {
    let claims: Record<string, unknown>;
    try {
      claims = await deps.auth.verify(jwt);
    } catch (err) {
      if (refusalOf(err)) throw err;
      deps.onJwtRefused?.((err as Error).message);
      if (inBody) throw new HttpError(400, 'token: invalid JWT');
      // The answer GET /_gw/v1/history gives a bad JWT.
      throw badRequestOf({ kind: 'change' }, authorizationProblem('invalid JWT'));
    }
    const session = ackSessionOf(claims, name);
    if (!session) throw new HttpError(400, 'An acknowledgement needs a JWT with a sub claim.');
    return session;
  }

  function refuse(res: ServerResponse, err: unknown, cors: Record<string, string>): void {
    if (err instanceof HttpError) {
      deps.metrics.acknowledged(resultOf(err.status));
      const retry = err.status === 503 ? unavailableHeaders() : {};
      sendText(res, err.status, err.message, {
        ...cors,
        ...retry,
        ...(err instanceof AckRefusal && err.headers),
      });
      return;
    }
    const refusal = refusalOf(err);
    if (!refusal) throw err;
    deps.metrics.acknowledged(resultOf(refusal.status));
    sendText(res, refusal.status, refusal.message, { ...cors, ...refusal.headers });
  }

  /** The public edge's part: false for another path. */
  return (req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean> => {
    if (requestPath(req) !== ACK_PATH) return false;
    if (req.method === 'OPTIONS') return deps.cors.preflight(req, res, preflight);
    if (req.method !== 'POST') {
      sendText(res, 405, 'Method not allowed.', { allow: 'POST, OPTIONS' });
      return true;
    }
    return post(req, res).then(() => true);
  };
}

/** Takes one acknowledgement from `key`'s budget; the 429 naming `whose` when it has none left. */
function take(budget: Budget, key: string, whose: string): void {
  const taken = budget.take(key);
  if (!taken.ok)
    throw new AckRefusal(429, `Too many acknowledgements ${whose}; retry later.`, {
      'retry-after': String(taken.retryAfterSeconds),
    });
}

/** JSON, or JSON in the `text/plain` of a CORS-safelisted request. */
function carriesJson(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || type === 'text/plain';
}

/** The first Bearer token (the proxy's first-token rule), if any; 400 for a malformed header. */
function firstBearer(
  bearerTokens: BearerTokens,
  authorization: string | string[] | undefined,
): string | undefined {
  try {
    return bearerTokens(authorization)[0];
  } catch (err) {
    throw badRequestOf({ kind: 'change' }, authorizationProblem((err as Error).message));
  }
}

/** The JWT of the header or of the body, sent once (RFC 6750 §2: one method per request); 401 without. */
function jwtOf(header: string | undefined, body: string | undefined): string {
  if (header !== undefined && body !== undefined)
    throw new HttpError(400, 'token: send the JWT once, in Authorization or in the body, not both.');
  const jwt = header ?? body;
  if (jwt === undefined)
    throw new AckRefusal(
      401,
      "An acknowledgement needs a JWT: Authorization: Bearer <JWT>, or the body's token.",
      { 'www-authenticate': 'Bearer' },
    );
  return jwt;
}

/** `{"session": <name>, "position": <text>, "token"?: <JWT>}`; a 400 naming what is wrong. */
export function readAck(text: string): AckBody {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new HttpError(400, `Expected a JSON body: ${(err as Error).message}`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    throw new HttpError(400, 'Expected a JSON object {"session": …, "position": …}.');
  const { session, position, token } = json as Record<string, unknown>;
  const problem = ackSessionNameProblem(session);
  if (problem) throw new HttpError(400, `session: ${problem}`);
  if (typeof position !== 'string')
    throw new HttpError(400, 'position: expected a stream position (a string)');
  if (token === undefined) return { session: session as string, position };
  if (typeof token !== 'string' || token === '')
    throw new HttpError(400, 'token: expected a JWT (a non-empty string)');
  return { session: session as string, position, token };
}
