/**
 * The epoch in the stream positions of the buses whose broker gives none of its own in them (Redis,
 * NATS JetStream, memory): `<place>.<epoch>`, the broker's place (stream id, sequence) and 8 hex
 * digits naming the incarnation of the topic, as Kafka's positions carry its topic id
 * (kafka-position.ts). A topic deleted and created anew (or lost with its store) has another epoch,
 * so a position of the old one is refused (reason `epoch`) instead of being read as a place in the
 * new one. A position without an epoch (made before epochs) is read as before.
 */
import { createHash, randomBytes } from 'node:crypto';
import { type Position, PositionUnavailableError } from './bus.ts';

const epochSuffix = /\.([0-9a-f]{8})$/;

export interface EpochPosition {
  /** The broker's own place: what it is asked with. */
  place: string;
  epoch: string | undefined;
}

export function withEpoch(place: string, epoch: string | undefined): Position {
  return epoch === undefined ? place : `${place}.${epoch}`;
}

/** Splits off the epoch; `place` must match `placePattern` whole, else the position is malformed. */
export function splitEpoch(position: Position, placePattern: RegExp, what: string): EpochPosition {
  const match = epochSuffix.exec(position);
  const place = match ? position.slice(0, match.index) : position;
  if (!placePattern.test(place)) throw new PositionUnavailableError(position, 'unknown', `not a ${what}`);
  return { place, epoch: match?.[1] };
}

/** A new epoch, for an incarnation the broker does not name itself. */
export function newEpoch(): string {
  return randomBytes(4).toString('hex');
}

/** The epoch of an incarnation the broker names with text (NATS: the stream's creation time). */
export function epochOf(name: string): string {
  return createHash('sha256').update(name).digest('hex').slice(0, 8);
}

/**
 * Refuses a position of another incarnation than the topic's now. Either without an epoch (a
 * position from before epochs, a topic whose epoch is not known) passes.
 */
export function assertSameEpoch(
  position: Position,
  from: { epoch?: string | undefined },
  now: string | undefined,
  topic: string,
): void {
  if (from.epoch !== undefined && now !== undefined && from.epoch !== now)
    throw new PositionUnavailableError(
      position,
      'epoch',
      `${topic} was created anew since (its epoch is ${now})`,
    );
}
