/**
 * `GET /_gw/v1/history?eventType=…&where=…&limit=…&before=…` for clients: the newest events of a
 * type, or of every type a type pattern matches (of one constraint object with `where`), newest
 * first, a page at most HISTORY_MAX_LIMIT events and HISTORY_MAX_BYTES long, `next` naming the `before` of the following page. Allowed
 * exactly as subscribing to that place is (the JWT rules and SUBSCRIPTION_CHECK with
 * `{"subscriptions": [the place]}`), and what the page holds is what that subscription would have
 * been sent (its JWT-inferred constraints too). At most HISTORY_QUERIES_PER_MINUTE per client
 * address (429): a page past the ring reads the broker. Bad parameters are a 400 naming them; the
 * broker or store down a 503 with Retry-After.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Position } from '@gatehouse/bus';
import { HttpError } from '@gatehouse/service-kit';
import type { RingEvent } from '../delivery/index.ts';
import { readPlace } from '../presence/index.ts';
import {
  createSubscriberGet,
  type SubscriberGetContext,
  type SubscriberGetDeps,
  type Subscription,
  typeFilterOf,
} from '../subscriptions/index.ts';
import { type HistoryPage, type HistorySource, readHistory } from './history-reader.ts';

export const HISTORY_PATH = '/_gw/v1/history';
/** Bytes of a `before` position: positions are short (an offset, a stream id, an epoch). */
const maxPositionBytes = 256;

/** `queries`: HISTORY_QUERIES_PER_MINUTE per client address. */
export interface HistoryApiDeps extends Omit<SubscriberGetDeps, 'path' | 'what'> {
  source: HistorySource;
  maxJsonDepth: number;
  /** Checks a place's constraint fields as a subscription's (the extractor configuration). */
  validate: (subs: Subscription[]) => void;
  /** Whether the subscriptions take an event (the hub's index). */
  matcherFor: (subs: Subscription[]) => (event: { type: string }) => boolean;
  /** HISTORY_MAX_LIMIT. */
  maxLimit: number;
  /** HISTORY_MAX_BYTES. */
  maxBytes: number;
}

export function createHistoryApi(deps: HistoryApiDeps) {
  async function answer(
    _req: IncomingMessage,
    res: ServerResponse,
    { query, cors, allowed }: SubscriberGetContext,
  ): Promise<void> {
    const place = readPlace(query, deps.maxJsonDepth, deps.validate);
    const limit = readLimit(query.get('limit'), deps.maxLimit);
    const before = readBefore(query.get('before'), deps.source);
    // The subscriptions of the type it makes: the place and the JWT-inferred ones of the type.
    const subs = (await allowed(place.eventType, place.where?.object)).filter(
      (s) => s.eventType === place.eventType,
    );
    const page = await readPlaceHistory(deps, place.eventType, subs, limit, before);
    sendPage(res, place.eventType, page, cors);
  }

  return {
    /** The public edge's part. */
    public: createSubscriberGet({ ...deps, path: HISTORY_PATH, what: 'history' }, answer),
  };
}

/** `limit`: 1 to the most a page holds; 20 (or that most when smaller) when absent. */
export function readLimit(text: string | null, maxLimit: number): number {
  if (text === null) return Math.min(20, maxLimit);
  const limit = /^[0-9]{1,9}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit)
    throw new HttpError(400, `limit: expected an integer from 1 to ${maxLimit}`);
  return limit;
}

/**
 * `before`: a stream position as events carry them (their SSE id, a history page's `next`), of the
 * stream's current epoch: a `next` kept from before the stream was created anew (a topic recreated,
 * a store lost) names a place in another history, and read as one of this stream it would page
 * events the client never had as if they came before what it holds (409, as an ack of it is).
 */
export function readBefore(
  text: string | null,
  source: Pick<HistorySource, 'compare' | 'epochChanged'>,
): Position | undefined {
  if (text === null) return undefined;
  if (text === '' || Buffer.byteLength(text) > maxPositionBytes)
    throw new HttpError(400, `before: expected a stream position (1 to ${maxPositionBytes} bytes)`);
  try {
    source.compare(text, text);
  } catch {
    throw new HttpError(400, 'before: not a stream position');
  }
  if (source.epochChanged(text))
    throw new HttpError(409, "before: of another epoch than the stream's current one (created anew since)");
  return text;
}

/** What the subscriptions `subs` of the place's type (or type pattern) were sent, a page of it. */
export function readPlaceHistory(
  deps: Pick<HistoryApiDeps, 'source' | 'matcherFor' | 'maxBytes'>,
  eventType: string,
  subs: Subscription[],
  limit: number,
  before: Position | undefined,
): Promise<HistoryPage> {
  const matches = deps.matcherFor(subs);
  // A type pattern (`orders.>`) pages every type it matches, as subscribing to it would.
  const ofType = typeFilterOf([{ eventType, oneOf: [] }]);
  return readHistory(deps.source, {
    types: [eventType],
    // The type first: an unread event of another type is never parsed.
    wanted: (e) => ofType(e.type) && matches(e.event as { type: string }),
    limit,
    before,
    maxBytes: deps.maxBytes,
  });
}

/** Answers the page (200, never cached). */
export function sendPage(
  res: ServerResponse,
  eventType: string,
  page: HistoryPage,
  headers: Readonly<Record<string, string>> = {},
): void {
  const body = answerBody(eventType, page);
  res.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(body);
}

/** The page as JSON: each event's own text as it is delivered, never parsed and written again. */
function answerBody(eventType: string, page: HistoryPage): string {
  const events = page.events.map(itemOf).join(',');
  const next = page.next === undefined ? '' : `,"next":${JSON.stringify(page.next)}`;
  return `{"eventType":${JSON.stringify(eventType)},"events":[${events}]${next}}`;
}

function itemOf(e: RingEvent): string {
  return `{"position":${JSON.stringify(e.position)},"event":${e.json}}`;
}
