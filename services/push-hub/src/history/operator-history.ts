/**
 * `GET /v3/history?eventType=…&where=…&limit=…&before=…` on the internal API, for the operator
 * console's history view: the page `GET /_gw/v1/history` gives a client, for any place. The
 * internal API's token (INTERNAL_API_TOKEN) is what allows it, so neither the JWT rules nor
 * SUBSCRIPTION_CHECK apply, nor the constraints a JWT would infer: the operator sees what every
 * subscriber of the place was sent. The page's bounds are the clients' (HISTORY_MAX_LIMIT,
 * HISTORY_MAX_BYTES, the broker read's); HISTORY_QUERIES_PER_MINUTE per address, counted apart from
 * the clients' so that neither locks the other out: a page past the event buffer reads the broker.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError, Router, sendJson } from '@gatehouse/service-kit';
import { readPlace } from '../presence/index.ts';
import { InvalidSubscriptionError, type Subscription } from '../subscriptions/index.ts';
import { type HistoryApiDeps, readBefore, readLimit, readPlaceHistory, sendPage } from './history-api.ts';

export const OPERATOR_HISTORY_PATH = '/v3/history';

export type OperatorHistoryDeps = Pick<
  HistoryApiDeps,
  'source' | 'matcherFor' | 'maxBytes' | 'maxLimit' | 'maxJsonDepth' | 'queries' | 'addressOf'
>;

export function createOperatorHistory(deps: OperatorHistoryDeps) {
  // The place is checked by compiling it (its pattern, its fields), as a subscription to it would
  // be, but held by no index: a query takes nothing of the replica's pattern budget.
  const check = (subs: Subscription[]): void => void deps.matcherFor(subs);

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const taken = deps.queries.take(deps.addressOf(req));
    if (!taken.ok)
      return sendJson(
        res,
        429,
        { error: 'Too many history queries; retry later.' },
        { 'retry-after': String(taken.retryAfterSeconds) },
      );
    const query = new URL(req.url ?? '/', 'http://local').searchParams;
    const place = readPlace(query, deps.maxJsonDepth, check);
    const limit = readLimit(query.get('limit'), deps.maxLimit);
    const before = readBefore(query.get('before'), deps.source);
    const subs = [{ eventType: place.eventType, oneOf: place.where ? [place.where.object] : [] }];
    try {
      check(subs);
    } catch (err) {
      if (err instanceof InvalidSubscriptionError) throw new HttpError(400, `eventType: ${err.message}`);
      throw err;
    }
    sendPage(res, place.eventType, await readPlaceHistory(deps, place.eventType, subs, limit, before));
  }

  const routes = new Router().get(OPERATOR_HISTORY_PATH, answer);
  /** The internal API's part (another method: 405 with Allow, as every internal route). */
  return (req: IncomingMessage, res: ServerResponse): Promise<boolean> => routes.handle(req, res);
}
