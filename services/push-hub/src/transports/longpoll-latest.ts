/**
 * The latest values a long-poll connection made with `latest=true` is owed, a page at a time. The
 * connection's private events hold a mark (longpoll-records.ts) until the client acknowledges it:
 * the poll that finds it sends the values, oldest first, as many as fit in the answer
 * (LONGPOLL_MAX_RESPONSE_BYTES, at least one). When they do not all fit, a new mark naming the last
 * one sent is queued after it, and the stream waits (its cursor does not move) so that every value
 * comes before the events after the cursor. An answer lost on its way loses nothing: its mark is
 * still there at the next poll, which sends the same page again and drops the marks queued after it.
 */
import type { LatestValue } from '../delivery/index.ts';
import type { Subscription } from '../subscriptions/index.ts';
import { type LongPollRecords, owesLatestValues, type PrivateEvent } from './longpoll-records.ts';

export interface LatestPageDeps {
  records: LongPollRecords;
  /** The values `subscriptions` want that the stream part after `cursor` does not carry, after `after`. */
  latestAt(subscriptions: Subscription[], cursor: string, after: string | undefined): Promise<LatestValue[]>;
}

export interface LatestPage {
  /** The values this answer carries, oldest first. */
  values: LatestValue[];
  /** Some are left for the next poll: the stream waits. */
  more: boolean;
  /** The private events the answer acknowledges: without the marks it dropped. */
  privateEvents: PrivateEvent[];
}

export async function latestPage(
  deps: LatestPageDeps,
  id: string,
  subscriptions: Subscription[],
  cursor: string,
  privateEvents: PrivateEvent[],
  room: number,
): Promise<LatestPage> {
  const [mark, ...stale] = privateEvents.filter(owesLatestValues);
  if (!mark) return { values: [], more: false, privateEvents };
  const values = await deps.latestAt(subscriptions, cursor, mark.latestAfter);
  const page = fitting(values, room);
  // Queued by an answer that was lost (the first mark is still unacknowledged): it would send again.
  if (stale.length > 0) await deps.records.dropMarks(id, stale);
  const more = page.length < values.length;
  if (more) await deps.records.owesLatestValues(id, page.at(-1)!.position);
  return { values: page, more, privateEvents: privateEvents.filter((e) => !stale.includes(e)) };
}

/** The first values whose JSON fits in `room` bytes, at least one. */
function fitting(values: LatestValue[], room: number): LatestValue[] {
  let bytes = 0;
  let n = 0;
  while (n < values.length && (n === 0 || bytes + values[n]!.json.length <= room)) {
    bytes += values[n]!.json.length;
    n++;
  }
  return values.slice(0, n);
}
