/**
 * `PUT /_gw/v1/connection/{sse|ws|socketio|longpolling}/{token}/subscriptions` replaces a
 * connection's subscriptions with JWT-inferred (from the Authorization header) ∪ the body's list,
 * whichever replica holds it: long-poll connections live in the store; the others are asked of the
 * replica the token names. 204 on success (the connection then gets `gw.subscriptions_set`);
 * 400 for a bad body, token (forged, altered or expired), JWT or subscription (RIG's texts); 403
 * when SUBSCRIPTION_CHECK denies (always consulted here, with the body as sent); 410 when the
 * connection is gone; 429 with Retry-After beyond MAX_SUBSCRIPTION_CHANGES_PER_MINUTE for the
 * connection; 503 with Retry-After when the store or the control bus cannot be reached. Only the
 * first Bearer token is verified and used (the proxy's first-token rule: one signature check per
 * request); the others are not looked at.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type CorsPolicy, HttpError, readBody, requestPath, sendText } from '@gatehouse/service-kit';
import { TRANSPORTS } from '../connections/index.ts';
import type { BearerTokens, ConnectionTokens } from '../auth/index.ts';
import {
  authorizationProblem,
  badRequest,
  badRequestOf,
  refusalOf,
  type ResolvedSubscriptions,
  type Subscription,
  type SubscriptionRequest,
} from '../subscriptions/index.ts';
import type { SubscriptionChangeLimit } from './subscription-change-limit.ts';
import { subscriptionsPreflight } from '../transports/index.ts';

const pathPattern = new RegExp(`^/_gw/v1/connection/(${TRANSPORTS.join('|')})/([^/]+)/subscriptions$`);

export interface SubscriptionChange {
  id: string;
  subscriptions: Subscription[];
  /** Their JWT-inferred part, which an operator's change keeps. */
  jwtSubscriptions: Subscription[];
  sessionId: string | undefined;
  sessionExpiresAt?: number | undefined;
  /** When the JWTs of the change expire: the connection then ends with them. */
  expiresAt?: number | undefined;
}

export interface SubscriptionsEndpointDeps {
  tokens: ConnectionTokens;
  bearerTokens: BearerTokens;
  resolve(req: SubscriptionRequest): ResolvedSubscriptions | Promise<ResolvedSubscriptions>;
  /** Applies the change wherever the connection lives; false when it no longer exists. */
  apply(replica: string, change: SubscriptionChange): Promise<boolean>;
  /** MAX_SUBSCRIPTION_CHANGES_PER_MINUTE: the 429 for a connection changed too often. */
  limitChanges: SubscriptionChangeLimit;
  cors: CorsPolicy;
  maxBodyBytes: number;
  /** The client's address (TRUSTED_PROXIES applied): a change spends its share of type patterns. */
  addressOf?: ((req: IncomingMessage) => string) | undefined;
}

export function createSubscriptionsEndpoint(deps: SubscriptionsEndpointDeps) {
  async function put(req: IncomingMessage, res: ServerResponse, encodedToken: string): Promise<void> {
    const cors = deps.cors.headers(req);
    try {
      assertAcceptsJson(req.headers.accept);
      const { json, text } = await readJsonBody(req, deps.maxBodyBytes);
      const address = deps.tokens.read(decodeToken(encodedToken));
      if (!address) throw badRequest('Invalid connection token.');
      const tooOften = await deps.limitChanges(address.id);
      if (tooOften) throw tooOften;
      let jwts: string[];
      try {
        jwts = deps.bearerTokens(req.headers.authorization).slice(0, 1);
      } catch (err) {
        throw badRequestOf({ kind: 'change' }, authorizationProblem((err as Error).message));
      }
      const resolved = await deps.resolve({
        kind: 'change',
        jwts,
        headerJwts: jwts,
        manual: json['subscriptions'],
        authorization: req.headers.authorization,
        // A change is always checked, with the body as the client sent it (as RIG does).
        checkBody: () => text,
        clientAddress: deps.addressOf?.(req),
      });
      const applied = await deps.apply(address.replica, { id: address.id, ...resolved });
      if (!applied) return sendText(res, 410, 'Connection no longer exists.', cors);
      res.writeHead(204, cors);
      res.end();
    } catch (err) {
      if (err instanceof HttpError) return sendText(res, err.status, err.message, cors);
      const refusal = refusalOf(err);
      if (refusal) return sendText(res, refusal.status, refusal.message, { ...cors, ...refusal.headers });
      throw err;
    }
  }

  return (req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean> => {
    const m = pathPattern.exec(requestPath(req));
    if (!m) return false;
    if (req.method === 'OPTIONS') return deps.cors.preflight(req, res, subscriptionsPreflight);
    if (req.method !== 'PUT') {
      sendText(res, 405, 'Method not allowed.', { allow: 'PUT, OPTIONS' });
      return true;
    }
    return put(req, res, m[2]!).then(() => true);
  };
}

/** The token path segment, percent-decoded; a malformed escape (`%fa`) is a bad token, not a 500. */
function decodeToken(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest('Invalid connection token.');
  }
}

function assertAcceptsJson(accept: string | undefined): void {
  if (accept === undefined || accept.trim() === '') return;
  const ok = accept.split(',').some((part) => {
    const type = part.split(';')[0]!.trim().toLowerCase();
    return type === 'application/json' || type === 'application/*' || type === '*/*';
  });
  if (!ok) throw new HttpError(406, 'This endpoint answers application/json only.');
}

/** The body decoded, and its text (what an external SUBSCRIPTION_CHECK receives). */
async function readJsonBody(
  req: IncomingMessage,
  limit: number,
): Promise<{ json: Record<string, unknown>; text: string }> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json')
    throw badRequest('Expected JSON encoded body (content-type application/json).');
  let text: string;
  try {
    text = (await readBody(req, limit)).toString('utf8');
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw badRequest(`Expected JSON encoded body: ${(err as Error).message}`);
  }
  return { json: readSubscriptionsJson(text), text };
}

/**
 * A body that must be a JSON object with a `subscriptions` field, in the client PUT's texts: the
 * operator's change (connections API) answers a bad body the same.
 */
export function readSubscriptionsJson(text: string): Record<string, unknown> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw badRequest(`Expected JSON encoded body: ${(err as Error).message}`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    throw badRequest('Expected a JSON object body.');
  if (!('subscriptions' in json)) throw badRequest('Expected field "subscriptions" is not present.');
  return json as Record<string, unknown>;
}
