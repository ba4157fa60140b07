/**
 * The newest events of the fan-out stream that the ring no longer holds, read from the broker: a
 * broadcast subscription with `last` (the stream's newest `scan` messages), read up to where it went
 * live and closed. Positions are opaque, so a broker cannot be read backwards from one; reading its
 * tail is the one way every replaying adapter offers, and `scan` bounds what it costs.
 */
import {
  type Bus,
  BusUnavailableError,
  type Message,
  type Position,
  PositionUnavailableError,
} from '@gatehouse/bus';
import { eventIdentity, type RingEvent } from './event-ring.ts';
import { readEventHeaders, readStreamEvent } from './stream-event.ts';
import { UnreadEvent } from './unread-event.ts';
import type { BrokerReadSlots } from './broker-read-slots.ts';

export interface BrokerTailOptions {
  bus: Bus;
  topic: string;
  /** Messages read at most, the newest of the stream (HISTORY_BROKER_SCAN). */
  scan: number;
  /** Time the read may take before the answer is our outage (HISTORY_BROKER_TIMEOUT). */
  timeoutMs: number;
  /** Reads at once on this replica (HISTORY_BROKER_READS); beyond, a read is our outage. */
  slots: BrokerReadSlots;
}

/**
 * The newest `limit` events `wanted` takes that come before `before` (every one when undefined),
 * oldest first, among the stream's newest `scan` messages.
 */
export async function readBrokerTail(
  options: BrokerTailOptions,
  wanted: (e: RingEvent) => boolean,
  limit: number,
  before: Position | undefined,
): Promise<RingEvent[]> {
  return (await readBrokerTailStart(options, wanted, limit, before)).events;
}

/** The newest events a tail read kept, and the position of the stream's message before the first. */
export interface TailStart {
  events: RingEvent[];
  /**
   * The position of the message (of any type) just before the first of `events`: a cursor a
   * replay from which delivers them all, with nothing before. The stream's origin when the first is
   * the oldest message the broker holds; undefined when no event was kept, or when the first is
   * the oldest of a full scan (the message before it was not read).
   */
  before: Position | undefined;
}

/** As readBrokerTail, with where the events start: a long poll's rewind names that place. */
export async function readBrokerTailStart(
  options: BrokerTailOptions,
  wanted: (e: RingEvent) => boolean,
  limit: number,
  before: Position | undefined,
): Promise<TailStart> {
  const release = options.slots.take();
  try {
    return await readTail(options, wanted, limit, before);
  } finally {
    release();
  }
}

async function readTail(
  options: BrokerTailOptions,
  wanted: (e: RingEvent) => boolean,
  limit: number,
  before: Position | undefined,
): Promise<TailStart> {
  const { bus } = options;
  /** Each kept event with the position of the message read before it (none for the first read). */
  const kept: Array<{ event: RingEvent; previous: Position | undefined }> = [];
  const seen = new Set<string>();
  const done = Promise.withResolvers<void>();
  // A time-out while subscribe is still pending is answered by its own rejection.
  done.promise.catch(() => {});
  let liveAfter: Position | undefined;
  let early: Message[] | undefined = [];
  let over = false;
  let previous: Position | undefined;
  let read = 0;
  const take = (m: Message) => {
    if (over) return;
    if (liveAfter !== undefined && bus.comparePositions(m.position, liveAfter) > 0) return finish();
    read++;
    const e = eventOf(m);
    const identity = e && eventIdentity(e);
    const older = before === undefined || bus.comparePositions(m.position, before) < 0;
    if (e && older && !(identity !== undefined && seen.has(identity)) && wanted(e)) {
      if (identity !== undefined) seen.add(identity);
      kept.push({ event: e, previous });
      // Only the newest `limit` are answered: the window slides, memory stays bounded.
      if (kept.length > limit) kept.shift();
    }
    previous = m.position;
    if (liveAfter !== undefined && bus.comparePositions(m.position, liveAfter) >= 0) finish();
  };
  function finish(): void {
    over = true;
    done.resolve();
  }
  const timer = setTimeout(
    () => done.reject(new BusUnavailableError('the fan-out stream did not answer in time')),
    options.timeoutMs,
  );
  const subscription = await bus
    .subscribe(options.topic, (m) => (early ? void early.push(m) : take(m)), {
      last: options.scan,
      onError: () => {},
    })
    .catch((err: unknown) => {
      clearTimeout(timer);
      // The stream was made anew or trimmed under the read: nothing older is known.
      if (err instanceof PositionUnavailableError) return undefined;
      throw err;
    });
  if (!subscription) return { events: [], before: undefined };
  try {
    liveAfter = subscription.liveAfter;
    const arrived = early;
    early = undefined;
    if (liveAfter === undefined) finish();
    for (const m of arrived) take(m);
    await done.promise;
    const first = kept[0];
    // A scan that read fewer messages than it may began at the oldest the broker holds: the origin is before it.
    const start = first && (first.previous ?? (read < options.scan ? subscription.origin : undefined));
    return { events: kept.map((k) => k.event), before: start };
  } finally {
    clearTimeout(timer);
    await subscription.close();
  }
}

function eventOf(m: Message): RingEvent | undefined {
  const headers = readEventHeaders(m.headers);
  if (headers) return new UnreadEvent(m.position, m.value, headers);
  const e = readStreamEvent(m.position, m.value.toString('utf8'));
  return typeof e === 'string' ? undefined : e;
}
