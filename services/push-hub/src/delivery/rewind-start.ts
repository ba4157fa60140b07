/**
 * Where a rewind of the last `n` events a subscription takes starts in the ring: the sequence
 * number of the oldest of them, found walking back from the newest event. `found` may be fewer than
 * `n`: then `seq` is the ring's oldest event, and whether more are owed depends on whether the
 * ring holds the whole stream (`complete`) or the broker holds older ones.
 */
import type { EventRing, RingEvent } from './event-ring.ts';

export interface RewindStart {
  /** Ring sequence number to write from. */
  seq: number;
  /** Events the subscription takes from `seq` on, at most `n`. */
  found: number;
  /** The ring holds every event of the stream (`wholeStream`): nothing older is owed. */
  complete: boolean;
}

/** `wholeStream`: whether the ring holds every event the stream has (Hub.ringHoldsWholeStream). */
export function rewindStart(
  ring: EventRing,
  matches: (e: RingEvent) => boolean,
  n: number,
  wholeStream: boolean,
): RewindStart {
  const first = ring.end - ring.size;
  let seq = ring.end;
  let found = 0;
  while (seq > first && found < n) {
    seq--;
    if (matches(ring.get(seq)!)) found++;
  }
  return { seq, found, complete: wholeStream };
}
