/**
 * The fan-out stream as the ack endpoint checks positions against it. Its head is the furthest of
 * the ring's place, the newest message stored when the subscription went live, and how far the
 * subscription has read:
 * - without EVENT_BUFFER_WARMUP the ring is empty until the next event, and its place was unknown:
 *   every position of any epoch was taken until then (an ack far ahead skips the session's events);
 * - with FANOUT_ROUTING=interest a replica reads only its own clients' types, so its ring stops at
 *   the last of those while another replica's clients get (and acknowledge, through any replica)
 *   events far past it; the subscription's read-through position (NATS) follows the whole stream.
 */
import type { Bus, Subscription } from '@gatehouse/bus';
import type { AckStream } from './ack-positions.ts';

export interface AckStreamSources {
  bus: Pick<Bus, 'comparePositions' | 'positionEpoch'>;
  /** The ring's place: its newest event, else the stream's origin. */
  place(): string | undefined;
  /** The fan-out subscription, once it is open. */
  subscription(): Pick<Subscription, 'liveAfter' | 'readThrough'> | undefined;
}

export function ackStreamOf(sources: AckStreamSources): AckStream {
  const { bus } = sources;
  return {
    head: () => {
      const subscription = sources.subscription();
      const read = furthest(bus, subscription?.liveAfter, sources.place());
      return furthest(bus, read, subscription?.readThrough?.());
    },
    compare: (a, b) => bus.comparePositions(a, b),
    epochOf: (p) => bus.positionEpoch?.(p),
  };
}

/** The further of two positions; of two epochs (the stream recreated since), the `later` known. */
function furthest(
  bus: AckStreamSources['bus'],
  earlier: string | undefined,
  later: string | undefined,
): string | undefined {
  if (earlier === undefined || later === undefined) return later ?? earlier;
  if (bus.positionEpoch?.(earlier) !== bus.positionEpoch?.(later)) return later;
  return bus.comparePositions(earlier, later) > 0 ? earlier : later;
}
