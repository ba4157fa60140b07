/**
 * Stream positions of the Kafka adapter: `<partition>-<offset>` (e.g. `0-42`), URL-safe. Offsets are
 * 64-bit, so they are carried as bigint, never as number.
 */
import { BusError, type Position } from './bus.ts';

export interface KafkaPosition {
  partition: number;
  offset: bigint;
}

export function formatKafkaPosition(partition: number, offset: string | bigint): Position {
  return `${partition}-${offset}`;
}

export function parseKafkaPosition(position: Position): KafkaPosition {
  const match = /^(\d{1,9})-(\d{1,19})$/.exec(position);
  if (!match) throw new BusError(`invalid kafka position '${position}' (expected <partition>-<offset>)`);
  return { partition: Number(match[1]), offset: BigInt(match[2]!) };
}
