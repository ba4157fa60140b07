/**
 * HTTP long-polling: `GET /_gw/v1/connection/longpolling`, for clients that can use neither SSE nor
 * WebSocket. Any hub replica answers any poll: the connection's subscriptions and its private
 * events (welcome events, subscription changes) live in the shared store (longpoll-records.ts),
 * and the events of the fan-out stream come from the replica's own ring, indexed by the same
 * stream positions everywhere, or from a broker replay for a cursor older than the ring.
 *
 * - No `connection_token` cookie (or an unknown one): create the connection → 200 `"ok"` with the
 *   cookies `connection_token` and `last_event_id`.
 * - With the cookie: answer `{"last_event_id": …, "gateway_events": n, "events": […]}` as soon as
 *   there is something (the hub's own events first, `gateway_events` of them: answerBody),
 *   or empty after the poll window; the cookie moves the cursor along. An answer carries at most
 *   `maxResponseBytes` of events (LONGPOLL_MAX_RESPONSE_BYTES): the cursor then stops at the last
 *   one sent, and the next poll goes on from there. An answer carrying private
 *   events sets `last_private_event_id`; they are removed once the next poll brings it back.
 * - A waiting poll sleeps until an event its subscriptions match arrives, its private events
 *   change, its session is killed, or the window ends (longpoll-waiters.ts): no polling loop.
 * - Stream events are filtered with the subscriptions read after they were taken from the ring,
 *   so a subscription change that completed before an event was published always applies to it.
 * - A blacklisted session gets `gw.session_killed` and the connection ends. The connection token
 *   (cookie) expires with the session's JWT (or after CONNECTION_TOKEN_TTL without one): an expired
 *   or unknown token is a new connection, made from the request's own `jwt` and `subscriptions`,
 *   which resumes from the client's `last_event_id` cookie; one whose cursor is still empty (made
 *   while the stream was empty, no event since) from the start of the ring, never its newest event.
 * - A connection an operator ends (connections API) gets `gw.connection_closed` queued as a private
 *   event: the poll that takes it answers with it and ends the connection (its cookies expire; with
 *   reconnect advice the `last_event_id` cookie stays, so the next poll resumes on a new connection).
 *   Each replica remembers the connections it served lately for the API (longpoll-sightings.ts).
 * - Connection caps (connection-places.ts): a connection holds a place on each replica that polled
 *   it within LONGPOLL_SESSION_TTL (its sighting there), taken by the create, or by the first poll
 *   a replica answers for it; at a cap the create or that poll is refused 429 (the address) or 503
 *   (the replica) with Retry-After. The connection stays in the store: the client polls again later.
 *   A connection not polled for LONGPOLL_SESSION_TTL is forgotten, in the store and here.
 * - An unreachable store is answered 503 with Retry-After; a stopping replica answers its waiting
 *   polls at once, with `connection: close`, so the next poll goes to another replica.
 * - `DELETE` with the connection (`pollToken` or the cookie) closes it, as @gatehouse/client's
 *   `close()` does: forgotten in the store at once, so no replica lists it or holds a place for it
 *   until LONGPOLL_SESSION_TTL (every replica watches the records and forgets a deleted or expired
 *   one); 204, also for one already gone; 400 for a missing or forged token.
 * - A client may keep its connection itself instead of in cookies, which every client of one origin
 *   in a browser shares (two tabs polling would take each other's token and cursor): the query's
 *   `pollToken`, `lastEventId` and `lastPrivateEventId` come before the cookies, and every
 *   answer names its connection (`Gatehouse-Connection-Token`) and, when it carries private events,
 *   what to acknowledge (`Gatehouse-Last-Private-Event-Id`), both readable across origins.
 */
import { type LongPollAcks, welcomeOf } from '../acks/index.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { requestPath, sendText, sendUnavailable, unavailabilityOf } from '@gatehouse/service-kit';
import type { Store } from '@gatehouse/store';
import { type ConnectRequest, readConnectRequest } from '../admission/index.ts';
import { type HubAuth, newConnectionId } from '../auth/index.ts';
import type { ReplayTarget, RingEvent } from '../delivery/index.ts';
import {
  type ExtractorConfig,
  hasPattern,
  refusalOf,
  type Subscription,
  typeFilterOf,
} from '../subscriptions/index.ts';
import {
  connectionClosed,
  connectionCreated,
  type ResyncReason,
  resyncReasonOf,
  resyncRequired,
  sessionKilled,
} from '../connections/index.ts';
import type { HubMetrics } from '../metrics/index.ts';
import {
  type ChangeCause,
  type ConnectionLifecycle,
  type EndReason,
  LongPollEnds,
} from '../lifecycle/index.ts';
import { longpollPreflight } from './cors.ts';
import {
  type LongPollRecord,
  LongPollRecords,
  owesLatestValues,
  type PrivateEvent,
  queuePrefix,
  recordPrefix,
} from './longpoll-records.ts';
import { latestPage } from './longpoll-latest.ts';
import { LongPollSightings } from './longpoll-sightings.ts';
import { LongPollWaiters } from './longpoll-waiters.ts';
import type { TransportContext } from './transport-context.ts';

export type { LongPollRecord } from './longpoll-records.ts';

export const LONGPOLL_PATH = '/_gw/v1/connection/longpolling';
const ACK_COOKIE = 'last_private_event_id';
const TOKEN_HEADER = 'gatehouse-connection-token';
const ACK_HEADER = 'gatehouse-last-private-event-id';
const exposed = { 'access-control-expose-headers': `${TOKEN_HEADER}, ${ACK_HEADER}` };
const CLIENT_GONE = new Error('the client closed the poll');
const COOKIE_PATH = '/_gw/v1/connection';

export interface LongPollOptions {
  store: Store;
  auth: HubAuth;
  extractors: ExtractorConfig;
  metrics: HubMetrics;
  /** How long a poll waits for events before answering empty. */
  pollWindowMs: number;
  /** A connection not polled for this long is forgotten. */
  sessionTtlSeconds: number;
  /** Private events kept per connection until the client acknowledges them. */
  maxQueued: number;
  /** Most stream events one answer reads from a broker replay (the client polls on for more). */
  replayPageSize?: number;
  /** Most bytes of events one answer carries (at least one event); the cursor moves by what was sent. */
  maxResponseBytes: number;
  /** Told of every long-poll connection opened and ended (LIFECYCLE_EVENTS_TOPIC). */
  lifecycle?: ConnectionLifecycle | undefined;
  /** How long what a closed event needs is kept at most: longer than a record can live. */
  lifecycleTtlSeconds?: number;
  /** Redelivery for connections with an ack session (acks/longpoll-acks.ts). */
  acks?: LongPollAcks | undefined;
}

/** The stream events after a cursor, not yet filtered, and the cursor after them. */
interface StreamSlice {
  events: RingEvent[];
  cursor: string;
  /** The cursor cannot be served: the client is told why (gw.resync_required). */
  resync?: ResyncReason;
  failed?: Error;
  /** A page of a broker replay, which kept only the events these subscriptions match. */
  keptFor?: Subscription[];
}

export function createLongPollTransport(ctx: TransportContext, opts: LongPollOptions) {
  const records = new LongPollRecords(opts.store, {
    ttlSeconds: opts.sessionTtlSeconds,
    maxQueued: opts.maxQueued,
  });
  // Waiting polls are interest too: the types they wait for are read while they wait (and a while after).
  const waiters = new LongPollWaiters(opts.extractors, ctx.hub.interest, ctx.hub.index.limits);
  const sightings = new LongPollSightings(opts.sessionTtlSeconds * 1000, Date.now, (id) =>
    ctx.places.release(id),
  );
  ctx.places.sweepWith(() => sightings.prune());
  const pageSize = opts.replayPageSize ?? 5000;
  const ends = opts.lifecycle && new LongPollEnds(opts.store, opts.lifecycleTtlSeconds ?? 25 * 3600);
  const { ring } = ctx.hub;
  const latestDeps = { records, latestAt: ctx.hub.latestAt.bind(ctx.hub) };
  let draining = false;

  /**
   * A new connection. A client whose connection is gone (token expired, record forgotten) still has
   * its cookies: it resumes from its cursor, and both count as reconnect evidence for the rate limit.
   */
  async function create(req: IncomingMessage, res: ServerResponse, named: PollState): Promise<void> {
    const cors = ctx.cors.headers(req);
    // The response holds the place until the connection is made; then its sighting does.
    const full = ctx.takePlace('longpolling', res, req);
    if (full) return sendText(res, full.status, full.message, { ...cors, ...full.headers });
    res.on('close', releasePlace);
    let request: ConnectRequest;
    let resolved: Awaited<ReturnType<TransportContext['gate']>>;
    try {
      request = readConnectRequest(req, ctx.bearerTokens);
      request.resumeFrom ??= named.cursor || undefined;
      request.connectionToken ??= named.token;
      resolved = await ctx.gate('longpolling', request, req);
    } catch (err) {
      const refusal = refusalOf(err);
      if (refusal) return sendText(res, refusal.status, refusal.message, { ...cors, ...refusal.headers });
      throw err;
    }
    const id = newConnectionId();
    // The cookie stops working when the session's JWT expires.
    const token = ctx.tokens.issue(id, resolved.clientAddress, resolved.sessionExpiresAt);
    const returning = madeHere(named.token) || madeHere(request.connectionToken);
    // As on SSE: an ack session's acknowledged position, else a resume, else a rewind, else the
    // latest values come first.
    const acked = resolved.ack?.position;
    const rewinds = acked === undefined && request.resumeFrom === undefined && !!request.rewind;
    const rewound = rewinds ? await ctx.hub.rewindCursor(resolved.subscriptions, request.rewind!) : undefined;
    const cursor = acked ?? request.resumeFrom ?? rewound ?? startOf(returning);
    const record: LongPollRecord = {
      subscriptions: resolved.subscriptions,
      jwtSubscriptions: resolved.jwtSubscriptions,
      sessionId: resolved.sessionId,
      cursor,
      connectedAt: Date.now(),
      ...(acked !== undefined && { ackStart: { at: acked, named: request.resumeFrom } }),
      ...(resolved.sessionExpiresAt !== undefined && { expiresAt: resolved.sessionExpiresAt }),
      ...(resolved.user !== undefined && { user: resolved.user }),
      ...(resolved.grantedSubscriptions !== undefined && {
        grantedSubscriptions: resolved.grantedSubscriptions,
      }),
      ...(resolved.ack && opts.acks && { ack: opts.acks.opened(resolved.ack, cursor) }),
    };
    await records.save(id, record);
    await ends?.remember({ ...snapshotOf(id, record), expiresAt: record.expiresAt });
    sightings.saw(id, record, resolved.clientAddress);
    opts.lifecycle?.opened(snapshotOf(id, record));
    const ack = resolved.ack && welcomeOf(resolved.ack);
    await records.enqueue(id, connectionCreated(token, resolved.welcomeData, undefined, ack));
    await records.subscriptionsChanged(id);
    if (request.latest && acked === undefined && request.resumeFrom === undefined && !rewinds)
      await records.owesLatestValues(id);
    const body = JSON.stringify('ok');
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-cache',
      'set-cookie': cookies(token, cursor, undefined, cookieAttributes(req)),
      [TOKEN_HEADER]: token,
      ...cors,
      ...exposed,
    });
    res.end(body);
    ctx.places.move(res, id);
  }

  /**
   * Where a connection without a cursor starts. A new client: at the newest event. A returning one
   * (it names a connection this gateway made: its forgotten long-poll connection, or its previous
   * connection as `connectionToken`, which @gatehouse/client sends) without a position has had no
   * event since it connected, while the stream was empty (clients keep the position of every event
   * they get, and long-poll answers and welcome events carry one once the ring holds any): every
   * event the ring holds is owed to it, so it starts before them (`''`, read as the ring's start, or
   * `gw.resync_required` once the ring has dropped some). Starting it at the newest event skipped,
   * without a word, everything published while it was away. A new client on a stream that never
   * held an event starts at its origin (`ring.place`), which a broker replay serves however far the
   * ring has turned over by its first poll.
   */
  function startOf(returning: boolean): string {
    return returning ? '' : (ring.place ?? '');
  }

  /** Whether a token names a connection this gateway made (authentic, not expired). */
  function madeHere(token: string | undefined): boolean {
    return token !== undefined && ctx.tokens.read(token) !== undefined;
  }

  function releasePlace(this: ServerResponse): void {
    ctx.places.release(this);
  }

  /**
   * Stream events after the cursor: from the ring, or a page of a broker replay of the events
   * `subscriptions` match.
   */
  function readStream(
    cursor: string,
    closed: AbortSignal,
    deadline: number,
    subscriptions: Subscription[],
  ): StreamSlice | Promise<StreamSlice> {
    const head = ring.head;
    // The ring serves the cursor only for types read since it (FANOUT_ROUTING=interest).
    const types = typesOf(subscriptions);
    if (cursor === '') {
      const all = ring.fromStart();
      if (all) return { events: all, cursor: head ?? '' };
      return { events: [], cursor: head ?? '', resync: 'retention-gap' };
    }
    if (ctx.hub.epochChanged(cursor)) {
      opts.metrics.resumed('resync');
      return { events: [], cursor: ring.place!, resync: 'epoch-changed' };
    }
    const held = ctx.hub.eventsAfter(cursor, types);
    if (held) return { events: held, cursor: held.at(-1)?.position ?? cursor };
    if (!ctx.hub.replay) return { events: [], cursor: head ?? cursor, resync: 'retention-gap' };
    return replayPage(cursor, closed, deadline, subscriptions, types);
  }

  /**
   * A page of a broker replay from the cursor, answered when it is full, when the replay reaches the
   * ring, or at `deadline` with what it has (a replay that does not progress, e.g. on a stream with
   * no event yet, must neither hold the poll past its window nor keep a replay reader). It keeps
   * only the events `subscriptions` match and reads past the others in the same broker
   * subscription: a page cut by events nobody here wants cost a replay reader (a broker consumer,
   * about a second to start on Kafka) per page, and its client a second per 1 MiB of them.
   */
  function replayPage(
    cursor: string,
    closed: AbortSignal,
    deadline: number,
    subscriptions: Subscription[],
    /** The types of `subscriptions`. */
    types: ReadonlySet<string>,
  ): Promise<StreamSlice> {
    const replay = ctx.hub.replay!;
    const wanted = wantedBy(subscriptions);
    return new Promise((resolve) => {
      const events: RingEvent[] = [];
      let bytes = 0;
      let read = cursor;
      let settled = false;
      const settle = (slice: StreamSlice) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        closed.removeEventListener('abort', onClose);
        replay.cancel(target);
        resolve(slice);
      };
      const onClose = () => settle({ events: [], cursor, failed: new Error('client gone') });
      // At the window's end the cursor goes as far as the reader went: past the events of other
      // types it was never offered, which the next poll must not read again.
      const timer = setTimeout(
        () => settle({ events, cursor: replay.readTo(target) ?? read, keptFor: subscriptions }),
        Math.max(0, deadline - Date.now()),
      );
      closed.addEventListener('abort', onClose);
      const target: ReplayTarget = {
        from: cursor,
        get wanted() {
          return !settled;
        },
        // A pattern's types are not known beforehand: its poll is offered every event.
        ...(!hasPattern(subscriptions) && { types }),
        covers: (position) => ctx.hub.covers(types, position),
        event: (e) => {
          read = e.position;
          if (!wanted(e)) return true;
          events.push(e);
          bytes += e.json.length;
          if (events.length < pageSize && bytes < opts.maxResponseBytes) return true;
          opts.metrics.resumed('broker');
          settle({ events, cursor: e.position, keptFor: subscriptions });
          return false;
        },
        caughtUp: (at, rest) => {
          opts.metrics.resumed('broker');
          const cursor = rest.at(-1)?.position ?? at;
          settle({ events: [...events, ...rest.filter(wanted)], cursor, keptFor: subscriptions });
        },
        unavailable: (err) => {
          opts.metrics.resumed('resync');
          settle({ events: [], cursor: ring.place ?? cursor, resync: resyncReasonOf(err) });
        },
        failed: (err) => settle({ events: [], cursor, failed: err }),
      };
      replay.request(target);
    });
  }

  async function poll(
    res: ServerResponse,
    id: string,
    token: string,
    found: LongPollRecord,
    named: PollState,
  ) {
    let cursor = cursorOf(named, found);
    const acknowledged = named.acknowledged;
    const closed = new AbortController();
    // A reason of our own: without one, abort() makes a DOMException (a stack trace) per poll.
    res.on('close', () => closed.abort(CLIENT_GONE));
    const deadline = Date.now() + opts.pollWindowMs;
    let rec = found;
    const clientAddress = ctx.addressOf(res.req);
    sightings.saw(id, rec, clientAddress);
    // Registered for the whole poll, before it first looks: a kill, private event or stream event
    // that comes while it reads the blacklist, its queue and the stream is kept for it, and a kill
    // rescan finds its session.
    const armed = waiters.arm({
      id,
      sessionId: rec.sessionId,
      subscriptions: rec.subscriptions,
      clientAddress,
    });
    const adopt = (newer: LongPollRecord | undefined) => {
      rec = newer ?? rec;
      if (newer) sightings.saw(id, rec, clientAddress);
      armed.update({ id, sessionId: rec.sessionId, subscriptions: rec.subscriptions, clientAddress });
    };
    const reload = async () => adopt(await records.load(id));
    // A subscription change comes with the record read after it: the poll goes on with that one.
    const pending = async (ack: string | undefined) => {
      const found = await records.pending(id, ack);
      if (found.record) adopt(found.record);
      return found.events;
    };
    try {
      // Both at once: one wait for the store instead of two.
      const [killed, queued] = await Promise.all([blacklisted(rec), pending(acknowledged)]);
      if (killed) return answerKilled(res, id, rec.sessionId!);
      let privateEvents = queued;
      // Its events not acknowledged within ACK_TIMEOUT: it ends as an operator's disconnect does.
      if (await ackTimedOut(id, rec, cursor)) privateEvents = await pending(acknowledged);
      for (;;) {
        const closing = privateEvents.findIndex(isConnectionClosed);
        if (closing >= 0) return answerClosed(res, id, privateEvents.slice(0, closing + 1));
        const slice = await readStream(cursor, closed.signal, deadline, rec.subscriptions);
        if (closed.signal.aborted) return;
        if (slice.failed) return answerUnavailable(res);
        // Subscriptions read after the events were taken: a change made before one of them was
        // published applies to it (a poll waiting since before the change has the old ones).
        if (slice.events.length > 0 || slice.keptFor) await reload();
        // A replay page kept what the subscriptions before a change wanted: read it again with the new ones.
        if (slice.keptFor && !sameSubscriptions(slice.keptFor, rec.subscriptions)) continue;
        const gatewayRoom = opts.maxResponseBytes - bytesOf(privateEvents);
        const latest = await latestPage(
          latestDeps,
          id,
          rec.subscriptions,
          cursor,
          privateEvents,
          gatewayRoom,
        );
        privateEvents = latest.privateEvents;
        const room = gatewayRoom - bytesOf(latest.values);
        // Latest values owed come first: while some are left, or they filled the answer, the stream waits.
        const taken =
          latest.more || (latest.values.length > 0 && room <= 0)
            ? { events: [], cursor }
            : takeMatching(slice, wantedBy(rec.subscriptions), room);
        const stream = [...latest.values.map((v) => v.json), ...taken.events];
        const own = slice.resync ? [resyncRequired(cursor, slice.resync).json] : [];
        if (stream.length > 0) await ackSent(id, rec, cursor);
        cursor = taken.cursor;
        const waitMs = deadline - Date.now();
        if (privateEvents.length > 0 || own.length > 0 || stream.length > 0 || waitMs <= 0 || draining)
          return answer(res, id, token, rec.expiresAt, cursor, privateEvents, own, stream);
        const reason = await armed.wait(waitMs, closed.signal);
        if (reason === 'closed') return;
        if (reason === 'killed' && (await blacklisted(rec))) return answerKilled(res, id, rec.sessionId!);
        if (reason === 'private') privateEvents = await pending(undefined);
      }
    } finally {
      armed.disarm();
    }
  }

  /**
   * An ack-session connection whose events were not acknowledged in time: `gw.connection_closed`
   * queued for it (true); an ack state that changed saved. Nothing for the others.
   */
  async function ackTimedOut(id: string, rec: LongPollRecord, cursor: string): Promise<boolean> {
    if (!rec.ack || !opts.acks) return false;
    const checked = await opts.acks.check(rec.ack, cursor);
    if (checked.end) {
      await records.enqueue(id, connectionClosed('ack_timeout', true));
      return true;
    }
    if (checked.next) await records.save(id, { ...rec, ack: checked.next });
    return false;
  }

  /** Stream events after `from` go out on an ack-session connection: its clock starts, unless it runs. */
  async function ackSent(id: string, rec: LongPollRecord, from: string): Promise<void> {
    const next = rec.ack && opts.acks?.sent(rec.ack, from);
    if (next) await records.save(id, { ...rec, ack: next });
  }

  /** Whether subscriptions want a stream event; the type first: an unread event of a type they do not want stays unread. */
  function wantedBy(subscriptions: Subscription[]): (e: RingEvent) => boolean {
    const matches = ctx.hub.index.matcherFor(subscriptions);
    const wantsType = typeFilterOf(subscriptions);
    return (e) => wantsType(e.type) && matches(e.event as { type: string });
  }

  function blacklisted(rec: LongPollRecord): Promise<boolean> | false {
    return rec.sessionId !== undefined && opts.auth.isBlacklisted(rec.sessionId);
  }

  async function answer(
    res: ServerResponse,
    id: string,
    token: string,
    /** When the connection's JWT expires: its record lives no longer. */
    expiresAt: number | undefined,
    cursor: string,
    privateEvents: PrivateEvent[],
    own: string[],
    stream: string[],
  ): Promise<void> {
    // The latest values owed are in `stream`: their mark is only acknowledged (with the last id).
    const gateway = privateEvents.filter((e) => !owesLatestValues(e)).map((e) => e.json);
    const body = answerBody(cursor, gateway.length + own.length, [...gateway, ...own, ...stream]);
    // A stopping replica: the next poll opens a new connection, which reaches another replica.
    if (draining) res.shouldKeepAlive = false;
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-cache',
      'set-cookie': cookies(token, cursor, privateEvents.at(-1)?.id, cookieAttributes(res.req)),
      [TOKEN_HEADER]: token,
      ...(privateEvents.length > 0 && { [ACK_HEADER]: privateEvents.at(-1)!.id }),
      ...ctx.cors.headers(res.req),
      ...exposed,
    });
    res.end(body);
    // The answer is out: a store that cannot be reached now only shortens the record's life.
    await records
      .touch(id, expiresAt)
      .catch((err: unknown) => ctx.logger.debug({ err }, 'long-poll touch failed'));
  }

  async function answerKilled(res: ServerResponse, id: string, sessionId: string): Promise<void> {
    sightings.forget(id);
    await ended(id, 'session_killed');
    const body = answerBody('', 1, [sessionKilled(sessionId).json]);
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-cache',
      'set-cookie': expiredCookies(cookieAttributes(res.req)),
      ...ctx.cors.headers(res.req),
    });
    res.end(body);
  }

  /**
   * The connection was ended by an operator: the private events up to `gw.connection_closed` go
   * out, the connection is forgotten and its cookies expire; with reconnect advice the cursor
   * cookie stays, so the client's next poll makes a new connection that resumes where this one was.
   */
  async function answerClosed(res: ServerResponse, id: string, events: PrivateEvent[]): Promise<void> {
    sightings.forget(id);
    const reconnect = reconnectAdvised(events.at(-1)!);
    await ended(id, reconnect ? 'reconnect_advised' : 'disconnected');
    const shown = events.filter((e) => !owesLatestValues(e)).map((e) => e.json);
    const body = answerBody('', shown.length, shown);
    const attributes = cookieAttributes(res.req);
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-cache',
      'set-cookie': reconnect ? expiredConnectionCookies(attributes) : expiredCookies(attributes),
      ...ctx.cors.headers(res.req),
    });
    res.end(body);
  }

  /** The broker could not be read for a replay: nothing is taken, the client polls again. */
  function answerUnavailable(res: ServerResponse): void {
    sendText(res, 503, 'Events are unavailable for the moment; poll again.', {
      'retry-after': '1',
      ...ctx.cors.headers(res.req),
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sent = parseCookies(req.headers.cookie);
    const named = pollStateOf(req, sent);
    const token = named.token;
    const address = token ? ctx.tokens.read(token) : undefined;
    const rec = address ? await records.load(address.id) : undefined;
    if (address && rec && token && !(rec.expiresAt !== undefined && rec.expiresAt <= Date.now())) {
      // A connection another replica made (or this one forgot) takes a place here at its first poll.
      const full = ctx.places.holds(address.id) ? undefined : ctx.takePlace('longpolling', address.id, req);
      if (full)
        return sendText(res, full.status, full.message, { ...ctx.cors.headers(req), ...full.headers });
      return poll(res, address.id, token, rec, named);
    }
    // Forgotten, or its session's JWT has expired: a new connection takes its place.
    if (address) sightings.forget(address.id);
    return create(req, res, named);
  }

  /** `DELETE`: the client is done with its connection. */
  async function close(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const cors = ctx.cors.headers(req);
    const { token } = pollStateOf(req, parseCookies(req.headers.cookie));
    const address = token ? ctx.tokens.read(token) : undefined;
    if (!address) return sendText(res, 400, 'Invalid connection token.', cors);
    sightings.forget(address.id);
    await ended(address.id, 'client_closed');
    res.writeHead(204, { 'set-cookie': expiredCookies(cookieAttributes(req)), ...cors });
    res.end();
  }

  /**
   * Forgets a connection that ended; the replica that takes what was kept of it tells of its end
   * (exactly once, however many replicas answer a DELETE or a closing poll at the same time).
   */
  async function ended(id: string, reason: EndReason): Promise<void> {
    await records.forget(id);
    const about = await ends?.take(id);
    if (about) opts.lifecycle!.closed(about, reason);
  }

  /**
   * A record that expired in the store: not polled for LONGPOLL_SESSION_TTL, or its JWT expired.
   * Every replica hears it; the one that takes what was kept of it tells of its end.
   */
  async function expired(id: string): Promise<void> {
    const about = await ends?.take(id);
    if (!about) return;
    const jwtExpired = about.expiresAt !== undefined && about.expiresAt <= Date.now() + 1000;
    opts.lifecycle!.closed(about, jwtExpired ? 'session_expired' : 'idle_timeout');
  }

  /** Every failure of the store (or the broker) is answered 503 with Retry-After, in this one place. */
  async function handleOrUnavailable(
    req: IncomingMessage,
    res: ServerResponse,
    handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  ): Promise<void> {
    try {
      await handle(req, res);
    } catch (err) {
      const outage = unavailabilityOf(err);
      if (!outage || res.headersSent) throw err;
      ctx.logger.warn({ err }, 'long poll: dependency unavailable');
      sendUnavailable(res, outage.dependency, ctx.cors.headers(res.req));
    }
  }

  return {
    handle(req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean> {
      if (requestPath(req) !== LONGPOLL_PATH) return false;
      if (req.method === 'OPTIONS') return ctx.cors.preflight(req, res, longpollPreflight);
      if (req.method !== 'GET' && req.method !== 'DELETE') {
        sendText(res, 405, 'Method not allowed.', { allow: 'GET, DELETE, OPTIONS' });
        return true;
      }
      return handleOrUnavailable(req, res, req.method === 'GET' ? handle : close).then(() => true);
    },
    /** Watches the store for private events and subscription changes made on any replica. */
    async start(): Promise<() => Promise<void>> {
      const queues = await opts.store.watch(queuePrefix, (change) => {
        if (change.kind === 'set') waiters.privateEvent(change.key.slice(queuePrefix.length));
        // Changes made while the watch was cut off were not heard: every waiting poll looks again.
        else if (change.kind === 'resync') waiters.wakeAll('private');
      });
      // A connection forgotten anywhere (closed by its client, killed, ended, expired) is forgotten
      // here too: not listed by the connections API, its place given back.
      const forgotten = await opts.store.watch(recordPrefix, (change) => {
        if (change.kind !== 'delete' && change.kind !== 'expire') return;
        const id = change.key.slice(recordPrefix.length);
        sightings.forget(id);
        if (change.kind === 'expire' && ends)
          expired(id).catch((err: unknown) =>
            ctx.logger.warn({ err, id }, 'lifecycle event of an expired long-poll connection not made'),
          );
      });
      return async () => {
        await Promise.all([queues(), forgotten()]);
      };
    },
    /** The replica stops: waiting polls answer now, and no answer keeps its connection open. */
    drain(): void {
      draining = true;
      waiters.wakeAll('timeout');
    },
    /** A fan-out event: wakes the polls waiting for it. */
    eventArrived(e: RingEvent): void {
      waiters.streamEvent(e);
    },
    /** Whether a poll in flight here waits for events of `type`. */
    wants: (type: string) => waiters.wants(type),
    sessionKilled(sessionId: string): void {
      waiters.sessionKilled(sessionId);
    },
    /** The sessions of the polls waiting on this replica now. */
    sessionIds: () => waiters.sessionIds(),
    /**
     * Ends a long-poll connection for an operator: `gw.connection_closed` is queued for it, which
     * wakes its waiting poll on whichever replica (or reaches its next one). False when it is gone.
     */
    async disconnect(id: string, reason: string, reconnect: boolean): Promise<boolean> {
      sightings.forget(id);
      if (!(await records.load(id))) return false;
      await records.enqueue(id, connectionClosed(reason, reconnect));
      return true;
    },
    /** A connection's subscriptions changed (its record saved): told, and kept for its closed event. */
    async subscriptionsChanged(id: string, rec: LongPollRecord, cause: ChangeCause): Promise<void> {
      if (!opts.lifecycle) return;
      opts.lifecycle.changed(snapshotOf(id, rec), cause);
      await ends!.remember({ ...snapshotOf(id, rec), expiresAt: rec.expiresAt });
    },
    sightings,
    waiters,
    records,
  };
}

/**
 * Where a poll reads from: the position it names (the client's, so any replica can serve it), else
 * the record's; but an ack-session connection's first polls name the position its client connected
 * with, which the acknowledged one replaced (the unacknowledged events after it come again).
 */
function cursorOf(named: PollState, rec: LongPollRecord): string {
  const start = rec.ackStart;
  if (start !== undefined && (named.cursor || undefined) === start.named) return start.at;
  return named.cursor || rec.cursor;
}

/** The connection a poll names, its cursor and what it acknowledges: the query's, else the cookies'. */
interface PollState {
  token: string | undefined;
  cursor: string;
  acknowledged: string | undefined;
}

/**
 * A poll's answer. The hub's own events come first, and `gateway_events` says how many: the mark
 * clients tell them by (no producer event can be among them, whatever its type or source says).
 */
function answerBody(cursor: string, gatewayEvents: number, events: string[]): string {
  return `{"last_event_id":${JSON.stringify(cursor)},"gateway_events":${gatewayEvents},"events":[${events.join(',')}]}`;
}

/** Bytes of the JSON of events (as LONGPOLL_MAX_RESPONSE_BYTES counts them). */
function bytesOf(events: ReadonlyArray<{ json: string }>): number {
  return events.reduce((n, e) => n + e.json.length, 0);
}

function sameSubscriptions(a: Subscription[], b: Subscription[]): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/** The event types of a poll's subscriptions. */
function typesOf(subscriptions: Subscription[]): ReadonlySet<string> {
  return new Set(subscriptions.map((s) => s.eventType));
}

function pollStateOf(req: IncomingMessage, sent: Record<string, string>): PollState {
  const query = new URL(req.url ?? '/', 'http://local').searchParams;
  const cookie = (name: string) => (sent[name] ? decodeCookieValue(sent[name]) : '');
  return {
    token: query.get('pollToken') || sent['connection_token'] || undefined,
    cursor: query.get('lastEventId') || cookie('last_event_id'),
    acknowledged: query.get('lastPrivateEventId') || cookie(ACK_COOKIE) || undefined,
  };
}

/**
 * The matching events of a slice that fit in `maxBytes` (at least one), and the cursor after what
 * was taken: the slice's own cursor when all of it fit, else the position of the last event looked
 * at before the first one that did not.
 */
export function takeMatching(
  slice: { events: RingEvent[]; cursor: string },
  matches: (e: RingEvent) => boolean,
  maxBytes: number,
): { events: string[]; cursor: string } {
  const events: string[] = [];
  let bytes = 0;
  let lastSeen: string | undefined;
  for (const e of slice.events) {
    if (matches(e)) {
      if (events.length > 0 && bytes + e.json.length > maxBytes) return { events, cursor: lastSeen! };
      events.push(e.json);
      bytes += e.json.length;
    }
    lastSeen = e.position;
  }
  return { events, cursor: slice.cursor };
}

/**
 * Path, HttpOnly, and Secure when the client reached us over TLS: on our own listener, or through a
 * proxy that ended it and says so (X-Forwarded-Proto: https, as the edge nginx sets it). A client
 * that claims https over plain HTTP only gets cookies its browser will not send back over it.
 */
function cookieAttributes(req: IncomingMessage): string {
  const forwarded = String(req.headers['x-forwarded-proto'] ?? '')
    .split(',')[0]!
    .trim()
    .toLowerCase();
  const secure = (req.socket as TLSSocket | undefined)?.encrypted === true || forwarded === 'https';
  return `; Path=${COOKIE_PATH}; HttpOnly${secure ? '; Secure' : ''}`;
}

function cookies(
  token: string,
  cursor: string,
  acknowledge: string | undefined,
  attributes: string,
): string[] {
  const attrs = `${attributes}; SameSite=Lax`;
  const out = [`connection_token=${token}${attrs}`, `last_event_id=${encodeURIComponent(cursor)}${attrs}`];
  if (acknowledge !== undefined) out.push(`${ACK_COOKIE}=${encodeURIComponent(acknowledge)}${attrs}`);
  return out;
}

/** Ends the connection but keeps the cursor: the next poll resumes on a new connection. */
function expiredConnectionCookies(attributes: string): string[] {
  const attrs = `${attributes}; Max-Age=0`;
  return [`connection_token=${attrs}`, `${ACK_COOKIE}=${attrs}`];
}

function isConnectionClosed(e: PrivateEvent): boolean {
  return e.json.includes('"gw.connection_closed"') && readType(e.json) === 'gw.connection_closed';
}

function reconnectAdvised(e: PrivateEvent): boolean {
  try {
    return (JSON.parse(e.json) as { data?: { reconnect?: unknown } }).data?.reconnect === true;
  } catch {
    return false;
  }
}

function readType(json: string): unknown {
  try {
    return (JSON.parse(json) as { type?: unknown }).type;
  } catch {
    return undefined;
  }
}

function expiredCookies(attributes: string): string[] {
  const attrs = `${attributes}; Max-Age=0`;
  return [`connection_token=${attrs}`, `last_event_id=${attrs}`, `${ACK_COOKIE}=${attrs}`];
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

function snapshotOf(id: string, rec: LongPollRecord) {
  return {
    id,
    transport: 'longpolling' as const,
    user: rec.user,
    sessionId: rec.sessionId,
    subscriptions: rec.subscriptions,
    connectedAt: rec.connectedAt,
  };
}
