/**
 * Stream positions of the Kafka adapter: `<partition>-<offset>` (e.g. `0-42`), URL-safe. Offsets are
 * 64-bit, so they are carried as bigint, never as number. A partition's origin, the place before
 * offset 0 of a new topic, is offset -1 (`0--1`): replaying from it reads the partition from offset 0.
 */
import { type Position, PositionUnavailableError } from './bus.ts';

export interface KafkaPosition {
  partition: number;
  offset: bigint;
}

export function formatKafkaPosition(partition: number, offset: string | bigint): Position {
  return `${partition}-${offset}`;
}

export function parseKafkaPosition(position: Position): KafkaPosition {
  const match = /^(\d{1,9})-(-1|\d{1,19})$/.exec(position);
  if (!match)
    throw new PositionUnavailableError(position, 'unknown', 'not a kafka position (<partition>-<offset>)');
  return { partition: Number(match[1]), offset: BigInt(match[2]!) };
}

/** Orders by partition, then offset. */
export function compareKafkaPositions(a: Position, b: Position): number {
  const x = parseKafkaPosition(a);
  const y = parseKafkaPosition(b);
  if (x.partition !== y.partition) return x.partition - y.partition;
  return x.offset === y.offset ? 0 : x.offset < y.offset ? -1 : 1;
}
