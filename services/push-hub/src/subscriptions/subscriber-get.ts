/**
 * A client's `GET` on the public edge that is allowed exactly as subscribing to a place is (the
 * JWT rules and SUBSCRIPTION_CHECK with `{"subscriptions": [the place]}`): its path, CORS
 * preflight and 405, its per-address query budget (429 with Retry-After), and its errors (an
 * HttpError or a refusal as the status it names, with the CORS headers). History and presence
 * answer through it, so a reader is refused where a subscriber would be.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type CorsPolicy,
  HttpError,
  type PreflightRules,
  requestPath,
  sendText,
} from '@gatehouse/service-kit';
import type { BearerTokens } from '../auth/index.ts';
import type { Subscription } from './subscription.ts';
import {
  authorizationProblem,
  badRequestOf,
  type ResolvedSubscriptions,
  refusalOf,
  type SubscriptionRequest,
} from './subscription-request.ts';

export interface SubscriberGetDeps {
  /** The public edge path it answers. */
  path: string;
  /** What is queried, as the 429 names it ("history", "presence"). */
  what: string;
  /** Queries per client address (the endpoint's *_QUERIES_PER_MINUTE). */
  /** Queries per client address (limits/address-budget.ts: limits/ imports this folder, so not by name). */
  queries: { take(address: string): { ok: true } | { ok: false; retryAfterSeconds: number } };
  addressOf: (req: IncomingMessage) => string;
  bearerTokens: BearerTokens;
  resolve(req: SubscriptionRequest): ResolvedSubscriptions | Promise<ResolvedSubscriptions>;
  cors: CorsPolicy;
}

/** What the answer is given once the client is within its budget. */
export interface SubscriberGetContext {
  query: URLSearchParams;
  /** The CORS headers every answer carries. */
  cors: Readonly<Record<string, string>>;
  /** Resolves the place as subscribing to it would be, refused as that would be. */
  allowed(eventType: string, where: Record<string, unknown> | undefined): Promise<Subscription[]>;
}

export type SubscriberGetAnswer = (
  req: IncomingMessage,
  res: ServerResponse,
  context: SubscriberGetContext,
) => Promise<void>;

const preflight: PreflightRules = { methods: 'GET', headers: 'authorization' };

export function createSubscriberGet(deps: SubscriberGetDeps, answer: SubscriberGetAnswer) {
  async function forClient(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const cors = deps.cors.headers(req);
    try {
      const taken = deps.queries.take(deps.addressOf(req));
      if (!taken.ok)
        return sendText(res, 429, `Too many ${deps.what} queries; retry later.`, {
          ...cors,
          'retry-after': String(taken.retryAfterSeconds),
        });
      const query = new URL(req.url ?? '/', 'http://local').searchParams;
      await answer(req, res, { query, cors, allowed: (type, where) => allowed(req, type, where) });
    } catch (err) {
      if (err instanceof HttpError) return sendText(res, err.status, err.message, cors);
      const refusal = refusalOf(err);
      if (refusal) return sendText(res, refusal.status, refusal.message, { ...cors, ...refusal.headers });
      throw err;
    }
  }

  async function allowed(
    req: IncomingMessage,
    eventType: string,
    where: Record<string, unknown> | undefined,
  ): Promise<Subscription[]> {
    let jwts: string[];
    try {
      jwts = deps.bearerTokens(req.headers.authorization).slice(0, 1);
    } catch (err) {
      throw badRequestOf({ kind: 'change' }, authorizationProblem((err as Error).message));
    }
    const manual = [{ eventType, oneOf: where ? [where] : [] }];
    const resolved = await deps.resolve({
      kind: 'change',
      jwts,
      headerJwts: jwts,
      manual,
      authorization: req.headers.authorization,
      checkBody: () => JSON.stringify({ subscriptions: manual }),
    });
    return resolved.subscriptions;
  }

  /** The public edge's part: false for another path. */
  return (req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean> => {
    if (requestPath(req) !== deps.path) return false;
    if (req.method === 'OPTIONS') return deps.cors.preflight(req, res, preflight);
    if (req.method !== 'GET') {
      sendText(res, 405, 'Method not allowed.', { allow: 'GET, OPTIONS' });
      return true;
    }
    return forClient(req, res).then(() => true);
  };
}
