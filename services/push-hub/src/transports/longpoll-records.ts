/**
 * What the store keeps of a long-poll connection: its record (subscriptions, session, the cursor it
 * started at), written when it is created and when its subscriptions change, never by a poll; and
 * its private events (welcome events, subscription changes), which stay queued until the client
 * acknowledges them: the `last_private_event_id` cookie of the next poll names the last one it got.
 * So an answer lost on its way (the client gone, the connection dropped) loses nothing.
 */
import type { Store } from '@gatehouse/store';
import type { OutgoingEvent } from '../gateway-events.ts';
import type { Subscription } from '../subscription.ts';

export interface LongPollRecord {
  subscriptions: Subscription[];
  sessionId: string | undefined;
  /** Stream position the connection started at (used when the cookie lacks one). */
  cursor: string;
  /** When the session's JWT expires (ms since the Unix epoch): the connection ends then. */
  expiresAt?: number;
}

/** A queued private event: its CloudEvent JSON and id. */
export interface PrivateEvent {
  json: string;
  id: string;
}

export const recordKey = (id: string) => `lp:${id}`;
export const queuePrefix = 'lpq:';
export const queueKey = (id: string) => `${queuePrefix}${id}`;

export class LongPollRecords {
  private readonly store: Store;
  private readonly ttlSeconds: number;
  private readonly maxQueued: number;

  constructor(store: Store, options: { ttlSeconds: number; maxQueued: number }) {
    this.store = store;
    this.ttlSeconds = options.ttlSeconds;
    this.maxQueued = options.maxQueued;
  }

  async load(id: string): Promise<LongPollRecord | undefined> {
    const text = await this.store.get(recordKey(id));
    return text === undefined ? undefined : JSON.parse(text);
  }

  async save(id: string, record: LongPollRecord): Promise<void> {
    await this.store.set(recordKey(id), JSON.stringify(record), { ttlSeconds: this.ttlSeconds });
  }

  async enqueue(id: string, e: OutgoingEvent): Promise<void> {
    await this.store.append(queueKey(id), e.json, { ttlSeconds: this.ttlSeconds, maxLength: this.maxQueued });
  }

  /**
   * The private events not acknowledged yet, oldest first. Those up to and including `acknowledged`
   * (the id of the last one the client got) are removed first.
   */
  async pending(id: string, acknowledged: string | undefined): Promise<PrivateEvent[]> {
    const queued = (await this.store.list(queueKey(id))).map(privateEvent);
    const upTo = acknowledged === undefined ? -1 : queued.findIndex((e) => e.id === acknowledged);
    if (upTo < 0) return queued;
    await this.store.removeItems(
      queueKey(id),
      queued.slice(0, upTo + 1).map((e) => e.json),
    );
    return queued.slice(upTo + 1);
  }

  /** Keeps a polled connection alive for another session TTL. */
  async touch(id: string): Promise<void> {
    await Promise.all([
      this.store.touch(recordKey(id), this.ttlSeconds),
      this.store.touch(queueKey(id), this.ttlSeconds),
    ]);
  }

  async forget(id: string): Promise<void> {
    await Promise.all([this.store.delete(recordKey(id)), this.store.delete(queueKey(id))]);
  }
}

function privateEvent(json: string): PrivateEvent {
  let id = '';
  try {
    id = String(JSON.parse(json).id ?? '');
  } catch {
    // Not ours: it is delivered as it is and can only be acknowledged along with a later one.
  }
  return { json, id };
}
