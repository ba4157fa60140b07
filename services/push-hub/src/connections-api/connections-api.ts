/**
 * The connections API on the internal API (API_PORT), answered by any hub replica for the whole
 * cluster (connections-cluster.ts):
 * - `GET /v3/connections`: the connections, filtered (`session`, `user`, `transport`, `replica`,
 *   `eventType`), in pages (`limit`, `cursor` ← the previous page's `next`);
 * - `GET /v3/connections/{id}`: one connection, with what its transport holds now;
 * - `DELETE /v3/connections/{id}?reason=…&reconnect=…` and `POST /v3/connections/disconnect`
 *   `{"session"|"user", "reason", "reconnect"}`: end connections; each client gets
 *   `gw.connection_closed` with the reason and the advice, then its transport's close;
 * - `PUT /v3/connections/{id}/subscriptions` `{"subscriptions"}` and `POST /v3/connections/subscriptions`
 *   `{"session"|"user", "subscriptions"}`: replace the manual part of live connections'
 *   subscriptions, the JWT-inferred part kept (operator-change.ts: the client PUT's model, checks
 *   and 400 texts, without SUBSCRIPTION_CHECK or the change rate limit); each client gets
 *   `gw.subscriptions_set` and from then on only the events of its new list. One: 204, or 404; many:
 *   200 `{"changed", "refused"}` (`refused`: connections whose union went over a bound, with why);
 * - `GET /v3/replicas`: each replica's connections per transport, delivery rate, fan-out position;
 *   and the sessions blacklisted now (the store's count, the same for every replica).
 * Every answer says whether it is `partial` and which replicas are `missing`. Like the rest of the
 * internal API it needs INTERNAL_API_TOKEN when set; bad input is a 400 naming it, our own store or
 * bus down a 503 with Retry-After (service-kit's failure answer).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError, type Params, Router, readBody, sendJson } from '@gatehouse/service-kit';
import type { ConnectionsCluster } from './connections-cluster.ts';
import {
  readDisconnectBody,
  readDisconnectQuery,
  readListQuery,
  readSubscribeBody,
} from './connections-query.ts';
import type { HubMetrics } from '../metrics/index.ts';
import { type OperatorChange, readSubscriptionsJson } from '../subscription-changes/index.ts';
import { refusalOf, type Subscription } from '../subscriptions/index.ts';

export interface ConnectionsApiDeps {
  cluster: ConnectionsCluster;
  metrics: HubMetrics;
  /** CONNECTIONS_API_MAX_LIMIT: the largest `limit` of a page. */
  maxLimit: number;
  /** Sessions blacklisted now (blacklist-count.ts); null when the store cannot count. */
  blacklistedSessions: () => Promise<number | null>;
  /** Checks an operator's subscription list as a client's PUT is checked (operator-change.ts). */
  operatorChange: Pick<OperatorChange, 'parse'>;
}

const maxBodyBytes = 16 * 1024;
/** A subscription list's body: as large as a client's PUT may send (MAX_SUBSCRIPTIONS_BYTES bounds the list). */
const maxSubscriptionsBodyBytes = 256 * 1024;
const idPattern = /^[A-Za-z0-9_-]{1,64}$/;

export function createConnectionsApi(deps: ConnectionsApiDeps) {
  const { cluster, metrics } = deps;

  async function list(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { filter, limit, after } = readListQuery(req.url, deps.maxLimit);
    const page = await cluster.list(filter, after, limit);
    metrics.connectionsApiAnswered('list', page.partial);
    sendJson(res, 200, page);
  }

  async function show(_req: IncomingMessage, res: ServerResponse, params: Params): Promise<void> {
    const id = idOf(params);
    const found = await cluster.get(id);
    metrics.connectionsApiAnswered('get', found.partial);
    if (found.connection) return sendJson(res, 200, found);
    sendJson(res, 404, {
      error: notFound(id, found.partial),
      partial: found.partial,
      missing: found.missing,
    });
  }

  async function disconnectOne(req: IncomingMessage, res: ServerResponse, params: Params): Promise<void> {
    const id = idOf(params);
    const { reason, reconnect } = readDisconnectQuery(req.url);
    const done = await cluster.disconnect({ id }, reason, reconnect);
    metrics.connectionsApiAnswered('disconnect', done.partial);
    if (done.disconnected > 0) return sendJson(res, 200, done);
    sendJson(res, 404, { error: notFound(id, done.partial), partial: done.partial, missing: done.missing });
  }

  async function disconnectMany(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { target, reason, reconnect } = readDisconnectBody(await jsonBody(req));
    const done = await cluster.disconnect(target, reason, reconnect);
    metrics.connectionsApiAnswered('disconnect', done.partial);
    sendJson(res, 200, done);
  }

  /** The body's decoded `subscriptions`, checked: the client PUT's 400 texts, as the error. */
  async function subscriptionsBody(
    req: IncomingMessage,
  ): Promise<{ fields: Record<string, unknown>; manual: Subscription[] }> {
    try {
      const fields = readSubscriptionsJson((await readBody(req, maxSubscriptionsBodyBytes)).toString('utf8'));
      return { fields, manual: await deps.operatorChange.parse(fields['subscriptions']) };
    } catch (err) {
      const refusal = refusalOf(err);
      if (refusal?.status === 400) throw new HttpError(400, refusal.message);
      throw err;
    }
  }

  async function subscribeOne(req: IncomingMessage, res: ServerResponse, params: Params): Promise<void> {
    const id = idOf(params);
    const { manual } = await subscriptionsBody(req);
    const done = await cluster.subscribe({ id }, manual);
    metrics.connectionsApiAnswered('subscriptions', done.partial);
    if (done.changed > 0) {
      res.writeHead(204);
      res.end();
      return;
    }
    if (done.refused.length > 0) return sendJson(res, 400, { error: done.refused[0]!.error });
    sendJson(res, 404, { error: notFound(id, done.partial), partial: done.partial, missing: done.missing });
  }

  async function subscribeMany(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { fields, manual } = await subscriptionsBody(req);
    const { target } = readSubscribeBody(fields);
    const done = await cluster.subscribe(target, manual);
    metrics.connectionsApiAnswered('subscriptions', done.partial);
    sendJson(res, 200, done);
  }

  async function replicas(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (new URL(req.url ?? '/', 'http://local').search !== '')
      throw new HttpError(400, 'GET /v3/replicas takes no query parameters');
    const [stats, blacklistedSessions] = await Promise.all([cluster.replicas(), deps.blacklistedSessions()]);
    metrics.connectionsApiAnswered('replicas', stats.partial);
    sendJson(res, 200, { ...stats, blacklistedSessions });
  }

  const router = new Router()
    .get('/v3/connections', list)
    .post('/v3/connections/disconnect', disconnectMany)
    .post('/v3/connections/subscriptions', subscribeMany)
    .put('/v3/connections/:id/subscriptions', subscribeOne)
    .get('/v3/connections/:id', show)
    .delete('/v3/connections/:id', disconnectOne)
    .get('/v3/replicas', replicas);
  return (req: IncomingMessage, res: ServerResponse): Promise<boolean> => router.handle(req, res);
}

function idOf(params: Params): string {
  const id = params['id']!;
  if (!idPattern.test(id))
    throw new HttpError(400, 'id: expected a connection id (1 to 64 of A-Z a-z 0-9 _ -)');
  return id;
}

function notFound(id: string, partial: boolean): string {
  return partial
    ? `no answering replica holds connection ${id}; the missing replicas were not asked in time`
    : `no replica holds connection ${id}`;
}

async function jsonBody(req: IncomingMessage): Promise<unknown> {
  const text = (await readBody(req, maxBodyBytes)).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, 'expected a JSON object body');
  }
}
