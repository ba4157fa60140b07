/**
 * HTTP long-polling: `GET /_gw/v1/connection/longpolling`, for clients that can use neither SSE nor
 * WebSocket. Any hub replica answers any poll: the connection's subscriptions and its private
 * events (welcome events, subscription changes) live in the shared store, and the events of the
 * fan-out stream come from the replica's own ring, indexed by the same stream positions everywhere.
 *
 * - No `connection_token` cookie (or an unknown one): create the connection → 200 `"ok"` with the
 *   cookies `connection_token` and `last_event_id`.
 * - With the cookie: answer `{"last_event_id": …, "events": […]}` as soon as there is something,
 *   or empty after the poll window; the cookie moves the cursor along.
 * - A blacklisted session gets `gw.session_killed` on its next poll and the connection ends.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestPath, sendText } from '@gatehouse/service-kit';
import type { Store } from '@gatehouse/store';
import { readConnectRequest } from '../connect-request.ts';
import {
  connectionCreated,
  type OutgoingEvent,
  resyncRequired,
  sessionKilled,
  subscriptionsSet,
} from '../gateway-events.ts';
import type { HubAuth } from '../hub-auth.ts';
import type { Subscription } from '../subscription.ts';
import { SubscriptionRequestError } from '../subscription-request.ts';
import { preflight } from './cors.ts';
import type { TransportContext } from './transport-context.ts';

export const LONGPOLL_PATH = '/_gw/v1/connection/longpolling';

export interface LongPollRecord {
  subscriptions: Subscription[];
  sessionId: string | undefined;
  /** Stream position the connection started at (used when the cookie lacks one). */
  cursor: string;
}

export interface LongPollOptions {
  store: Store;
  auth: HubAuth;
  /** How long a poll waits for events before answering empty. */
  pollWindowMs: number;
  /** A connection not polled for this long is forgotten. */
  sessionTtlSeconds: number;
  /** Private events kept per connection between polls. */
  maxQueued: number;
}

export const recordKey = (id: string) => `lp:${id}`;
export const queueKey = (id: string) => `lpq:${id}`;

export function createLongPollTransport(ctx: TransportContext, opts: LongPollOptions) {
  const { store } = opts;
  const waiters = new Set<() => void>();
  const cookiePath = '/_gw/v1/connection';

  const records = {
    async load(id: string): Promise<LongPollRecord | undefined> {
      const text = await store.get(recordKey(id));
      return text === undefined ? undefined : JSON.parse(text);
    },
    save: (id: string, r: LongPollRecord) =>
      store.set(recordKey(id), JSON.stringify(r), { ttlSeconds: opts.sessionTtlSeconds }),
    enqueue: (id: string, e: OutgoingEvent) =>
      store.append(queueKey(id), e.json, { ttlSeconds: opts.sessionTtlSeconds, maxLength: opts.maxQueued }),
  };

  async function create(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const cors = corsHeaders(ctx.corsOrigin);
    let resolved: Awaited<ReturnType<TransportContext['gate']>>;
    try {
      resolved = await ctx.gate('longpolling', readConnectRequest(req, ctx.bearerTokens));
    } catch (err) {
      if (err instanceof SubscriptionRequestError) return sendText(res, err.status, err.message, cors);
      throw err;
    }
    const id = randomUUID();
    const token = ctx.tokens.issue(id);
    const cursor = ctx.hub.ring.head ?? '';
    await records.save(id, { subscriptions: resolved.subscriptions, sessionId: resolved.sessionId, cursor });
    await records.enqueue(id, connectionCreated(token));
    await records.enqueue(id, subscriptionsSet(resolved.subscriptions));
    const body = JSON.stringify('ok');
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-cache',
      'set-cookie': cookies(token, cursor, cookiePath),
      ...cors,
    });
    res.end(body);
  }

  async function poll(
    req: IncomingMessage,
    res: ServerResponse,
    id: string,
    token: string,
    rec: LongPollRecord,
  ) {
    const cookie = parseCookies(req.headers.cookie)['last_event_id'];
    let cursor = cookie ? decodeCookieValue(cookie) : rec.cursor;
    const matcher = ctx.hub.index.matcherFor(rec.subscriptions);
    let ended = false;

    const collect = async (): Promise<string[]> => {
      const out: string[] = [];
      if (rec.sessionId !== undefined && (await opts.auth.isBlacklisted(rec.sessionId))) {
        await store.delete(recordKey(id));
        await store.delete(queueKey(id));
        ended = true;
        return [sessionKilled(rec.sessionId).json];
      }
      out.push(...(await store.takeAll(queueKey(id))));
      const missed = cursor === '' ? ctx.hub.ring.fromStart() : ctx.hub.ring.after(cursor);
      if (!missed) out.push(resyncRequired(cursor).json);
      for (const e of missed ?? []) if (matcher(e.event as { type: string })) out.push(e.json);
      cursor = ctx.hub.ring.head ?? cursor;
      return out;
    };

    let events = await collect();
    const deadline = Date.now() + opts.pollWindowMs;
    while (events.length === 0 && !ended && Date.now() < deadline && !req.destroyed) {
      await waitForEvent(waiters, Math.min(500, deadline - Date.now()));
      events = await collect();
    }
    if (req.destroyed) return;
    if (!ended) await records.save(id, { ...rec, cursor });
    const body = `{"last_event_id":${JSON.stringify(cursor)},"events":[${events.join(',')}]}`;
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-cache',
      'set-cookie': ended ? expiredCookies(cookiePath) : cookies(token, cursor, cookiePath),
      ...corsHeaders(ctx.corsOrigin),
    });
    res.end(body);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const token = parseCookies(req.headers.cookie)['connection_token'];
    const address = token ? ctx.tokens.read(token) : undefined;
    const rec = address ? await records.load(address.id) : undefined;
    if (address && rec && token) return poll(req, res, address.id, token, rec);
    return create(req, res);
  }

  return {
    handle(req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean> {
      if (requestPath(req) !== LONGPOLL_PATH) return false;
      if (req.method === 'OPTIONS') return preflight(res, ctx.corsOrigin, 'GET');
      if (req.method !== 'GET') {
        sendText(res, 405, 'Method not allowed.', { allow: 'GET, OPTIONS' });
        return true;
      }
      return handle(req, res).then(() => true);
    },
    /** Wakes waiting polls; the service calls it after every fan-out event. */
    notify(): void {
      for (const wake of [...waiters]) wake();
    },
    records,
  };
}

function waitForEvent(waiters: Set<() => void>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      waiters.delete(done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(ms, 0));
    waiters.add(done);
  });
}

function corsHeaders(origin: string): Record<string, string> {
  return { 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true' };
}

function cookies(token: string, cursor: string, path: string): string[] {
  const attrs = `; Path=${path}; HttpOnly; SameSite=Lax`;
  return [`connection_token=${token}${attrs}`, `last_event_id=${encodeURIComponent(cursor)}${attrs}`];
}

function expiredCookies(path: string): string[] {
  const attrs = `; Path=${path}; HttpOnly; Max-Age=0`;
  return [`connection_token=${attrs}`, `last_event_id=${attrs}`];
}

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

function decodeCookieValue(v: string): string {
  try {
    return decodeURIComponent(v.replace(/^"|"$/g, ''));
  } catch {
    return v;
  }
}
