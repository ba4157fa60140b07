/**
 * What the store keeps of a long-poll connection: its record (subscriptions, session, the cursor it
 * started at), written when it is created and when its subscriptions change, never by a poll; and
 * its private events (welcome events, subscription changes), which stay queued until the client
 * acknowledges them: the `last_private_event_id` cookie of the next poll names the last one it got.
 * So an answer lost on its way (the client gone, the connection dropped) loses nothing.
 *
 * The subscriptions are stored once, in the record. A change queues `gw.subscriptions_set` without
 * its list, and a poll sends the list the record holds then; the changes a poll finds queued come
 * as one, the last, since only the list in force is of use to the client. So a connection costs one
 * list in the store however often it changes (200 changes queued used to keep 200 copies).
 */
import type { LongPollAck } from '../acks/index.ts';
import type { Store } from '@gatehouse/store';
import { type OutgoingEvent, subscriptionsChanged } from '../connections/index.ts';
import type { Subscription } from '../subscriptions/index.ts';

export interface LongPollRecord {
  subscriptions: Subscription[];
  /** The JWT-inferred part of `subscriptions`: an operator's change keeps it (one model). */
  jwtSubscriptions?: Subscription[];
  sessionId: string | undefined;
  /** Stream position the connection started at (used when the cookie lacks one). */
  cursor: string;
  /**
   * An ack session's acknowledged position (`at`) where it started, and the position the client
   * named when it connected (`named`): a poll that still names that one has had nothing of this
   * connection yet and starts at `at`.
   */
  ackStart?: { at: string; named: string | undefined };
  /** When the session's JWT expires (ms since the Unix epoch): the connection ends then. */
  expiresAt?: number;
  /** The user name of its JWT (JWT_USER_FIELD), for the connections API. */
  user?: string;
  /** When it was made (ms since the Unix epoch), for the connections API. */
  connectedAt?: number;
  /** The subscriptions the connect hook gave it: a client's own change keeps them. */
  grantedSubscriptions?: Subscription[];
  /** Its ack session (`ackSession`), and what was sent that is not known acknowledged. */
  ack?: LongPollAck;
}

/** A queued private event: its CloudEvent JSON and id. */
export interface PrivateEvent {
  json: string;
  id: string;
  /** A subscription change whose list is the record's (subscriptionsChanged). */
  listInRecord?: boolean;
  /** The mark of the latest values owed (owesLatestValues): never sent itself. */
  latestValues?: boolean;
  /** Of such a mark: the position of the last value sent before it (those up to it are not owed). */
  latestAfter?: string;
}

/** The private events a poll may send, and the record read after them when it gave them their list. */
export interface Pending {
  events: PrivateEvent[];
  record: LongPollRecord | undefined;
}

export const recordPrefix = 'lp:';
export const recordKey = (id: string) => `${recordPrefix}${id}`;
export const queuePrefix = 'lpq:';
export const queueKey = (id: string) => `${queuePrefix}${id}`;

/**
 * How long a record lives in the store: the session TTL, but never past the connection's JWT (its
 * `expiresAt`): a poll after that makes a new connection anyway, and the record's expiry is what
 * makes every replica forget it (the connections API, connection places), so a connection ended by
 * its JWT is not listed for another TTL (every token renewal of a long-polling client left one).
 */
function lifetime(ttlSeconds: number, expiresAt: number | undefined): number {
  if (expiresAt === undefined) return ttlSeconds;
  return Math.max(1, Math.min(ttlSeconds, Math.ceil((expiresAt - Date.now()) / 1000)));
}

/** The longest a touch period lasts: a connection is forgotten at most this long after its TTL. */
const maxTouchPeriodMs = 60_000;

export class LongPollRecords {
  private readonly store: Store;
  private readonly ttlSeconds: number;
  private readonly maxQueued: number;
  /** How long one touch lasts on this replica: an eighth of the TTL, at most a minute. */
  private readonly touchPeriodMs: number;
  /** Connections this replica touched in the current period (emptied when it ends). */
  private touched = new Set<string>();
  private periodEndsAt = 0;

  constructor(store: Store, options: { ttlSeconds: number; maxQueued: number }) {
    this.store = store;
    this.ttlSeconds = options.ttlSeconds;
    this.maxQueued = options.maxQueued;
    this.touchPeriodMs = Math.min(maxTouchPeriodMs, (options.ttlSeconds * 1000) / 8);
  }

  async load(id: string): Promise<LongPollRecord | undefined> {
    const text = await this.store.get(recordKey(id));
    return text === undefined ? undefined : JSON.parse(text);
  }

  async save(id: string, record: LongPollRecord): Promise<void> {
    const ttlSeconds = lifetime(this.ttlSeconds, record.expiresAt);
    await this.store.set(recordKey(id), JSON.stringify(record), { ttlSeconds });
  }

  async enqueue(id: string, e: OutgoingEvent): Promise<void> {
    await this.store.append(queueKey(id), e.json, { ttlSeconds: this.ttlSeconds, maxLength: this.maxQueued });
  }

  /** Queues the news that the subscriptions changed; save the record first. */
  subscriptionsChanged(id: string): Promise<void> {
    return this.enqueue(id, subscriptionsChanged());
  }

  /**
   * Marks the connection as owed the latest values of its places (`latest=true`): the poll that
   * finds the mark sends them, and they are owed until the client acknowledges it as a private
   * event, so an answer lost on its way loses none. A mark, not the values: the record stays small,
   * and the values are the store's when they are sent, for the subscriptions in force then. `after`:
   * those up to this position were sent (longpoll-latest.ts pages them).
   */
  owesLatestValues(id: string, after?: string): Promise<void> {
    const mark = { type: latestValuesMark, id: crypto.randomUUID(), ...(after !== undefined && { after }) };
    return this.store
      .append(queueKey(id), JSON.stringify(mark), { ttlSeconds: this.ttlSeconds, maxLength: this.maxQueued })
      .then(() => undefined);
  }

  /** Removes marks of latest values owed that no longer say what is owed. */
  async dropMarks(id: string, marks: PrivateEvent[]): Promise<void> {
    await this.store.removeItems(
      queueKey(id),
      marks.map((m) => m.json),
    );
  }

  /**
   * The private events not acknowledged yet, oldest first, as a poll sends them. Those up to and
   * including `acknowledged` (the id of the last one the client got) are removed first. Of the
   * subscription changes, the last one stands for all (the others are acknowledged with it), with
   * the list of the record read after the queue, so at least as new as that change.
   */
  async pending(id: string, acknowledged: string | undefined): Promise<Pending> {
    const queued = (await this.store.list(queueKey(id))).map(privateEvent);
    const upTo = acknowledged === undefined ? -1 : queued.findIndex((e) => e.id === acknowledged);
    if (upTo >= 0)
      await this.store.removeItems(
        queueKey(id),
        queued.slice(0, upTo + 1).map((e) => e.json),
      );
    const rest = queued.slice(upTo + 1);
    const lastChange = rest.findLast((e) => e.listInRecord);
    if (!lastChange) return { events: rest, record: undefined };
    const record = await this.load(id);
    const events = rest.filter((e) => !e.listInRecord || (e === lastChange && record));
    if (record) events[events.indexOf(lastChange)] = withList(lastChange, record.subscriptions);
    return { events, record };
  }

  /**
   * Keeps a polled connection alive for another session TTL. Once per touch period per replica, not
   * once per poll (two writes of a poll's five store commands): the TTL it sets is longer by a
   * period, so a connection is forgotten between one TTL and one TTL plus a period after its last poll.
   */
  async touch(id: string, expiresAt?: number): Promise<void> {
    const now = Date.now();
    if (now >= this.periodEndsAt) {
      this.touched = new Set();
      this.periodEndsAt = now + this.touchPeriodMs;
    }
    if (this.touched.has(id)) return;
    this.touched.add(id);
    const ttlSeconds = lifetime(this.ttlSeconds + this.touchPeriodMs / 1000, expiresAt);
    await Promise.all([
      this.store.touch(recordKey(id), ttlSeconds),
      this.store.touch(queueKey(id), ttlSeconds),
    ]).catch((err: unknown) => {
      // Not touched after all: the next poll tries again.
      this.touched.delete(id);
      throw err;
    });
  }

  /** True when the record was there: the one that forgets it is the one that ended the connection. */
  async forget(id: string): Promise<boolean> {
    this.touched.delete(id);
    const [had] = await Promise.all([this.store.delete(recordKey(id)), this.store.delete(queueKey(id))]);
    return had;
  }
}

/** The type of the mark owesLatestValues queues: a gateway type, which no producer event can have. */
const latestValuesMark = 'gw.latest_values_owed';

/** Whether a queued item is the mark of the latest values owed. */
export function owesLatestValues(e: PrivateEvent): boolean {
  return e.latestValues === true;
}

function privateEvent(json: string): PrivateEvent {
  try {
    const event = JSON.parse(json);
    const id = String(event.id ?? '');
    if (event.type === latestValuesMark)
      return {
        json,
        id,
        latestValues: true,
        ...(typeof event.after === 'string' && { latestAfter: event.after }),
      };
    // One queued before lists moved to the record carries its own and is sent as it is.
    return event.type === 'gw.subscriptions_set' && !('data' in event)
      ? { json, id, listInRecord: true }
      : { json, id };
  } catch {
    // Not ours: it is delivered as it is and can only be acknowledged along with a later one.
    return { json, id: '' };
  }
}

function withList(change: PrivateEvent, subscriptions: Subscription[]): PrivateEvent {
  return { json: JSON.stringify({ ...JSON.parse(change.json), data: subscriptions }), id: change.id };
}
