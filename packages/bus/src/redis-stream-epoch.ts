/**
 * The epoch of a Redis stream (position-epoch.ts): which incarnation of the stream key a position
 * belongs to. It is kept in the stream itself, as the name of an empty consumer group
 * (`gatehouse-epoch-<8 hex>`) that nobody reads with, so it lives and dies with the key, atomically:
 * DEL/UNLINK and a Redis restart without persistence take it away with the entries, and the next
 * XADD makes a stream that gets a new one; a trim (even to empty) keeps the key, its last id and its
 * groups, so positions go on in the same epoch (what was trimmed is refused as expired, as before).
 * Redis has nothing else that tells incarnations apart: stream ids are times, so a stream made anew
 * may hold ids after an old position's, and a position of the old one would read as one of the new.
 *
 * The group is made by whoever first needs the epoch (a publish, a subscriber, createTopic), with an
 * epoch drawn by the caller, in one script that first looks for an existing one, so concurrent
 * makers agree. A stream made by something that does not know epochs (an older Gatehouse, a plain
 * XADD) gets one the first time Gatehouse looks.
 */
import type { RedisClient } from '@gatehouse/store';
import { newEpoch } from './position-epoch.ts';

const GROUP_PREFIX = 'gatehouse-epoch-';

/** The name of the stream's epoch group: what tells that a group is not a consumer group of the bus. */
export function isEpochGroup(name: string): boolean {
  return name.startsWith(GROUP_PREFIX);
}

/**
 * KEYS[1]: the stream; ARGV[1]: the epoch to give it when it has none; ARGV[2]: `make` to make a
 * missing stream (empty), `keep` to answer nil for it. Answers the stream's epoch.
 */
const epochScript = `
local prefix = '${GROUP_PREFIX}'
if redis.call('EXISTS', KEYS[1]) == 0 then
  if ARGV[2] ~= 'make' then return false end
  redis.call('XGROUP', 'CREATE', KEYS[1], prefix .. ARGV[1], '$', 'MKSTREAM')
  return ARGV[1]
end
for _, group in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
  local name = group[2]
  if string.sub(name, 1, #prefix) == prefix then return string.sub(name, #prefix + 1) end
end
redis.call('XGROUP', 'CREATE', KEYS[1], prefix .. ARGV[1], '$')
return ARGV[1]
`;

export type MissingStream = 'make' | 'keep';

/** What the script adds to a connection (defineStreamEpoch) and to its MULTI. */
export interface StreamEpochCommand<R> {
  gatehouseStreamEpoch(key: string, epoch: string, missing: MissingStream): R;
}

export function defineStreamEpoch(client: RedisClient): void {
  client.defineCommand('gatehouseStreamEpoch', { numberOfKeys: 1, lua: epochScript });
}

/** The stream's epoch (made when it has none); undefined for a missing stream unless `make`. */
export async function streamEpoch(
  client: RedisClient,
  key: string,
  missing: MissingStream,
): Promise<string | undefined> {
  const command = client as unknown as StreamEpochCommand<Promise<string | null>>;
  return readEpoch(await command.gatehouseStreamEpoch(key, newEpoch(), missing));
}

/** Adds the epoch's look-up to a MULTI, to read it atomically with what else the MULTI does. */
export function queueStreamEpoch<M>(multi: M, key: string, missing: MissingStream): M {
  (multi as unknown as StreamEpochCommand<M>).gatehouseStreamEpoch(key, newEpoch(), missing);
  return multi;
}

/** An epoch group made by hand with another name than 8 hex digits is not trusted: no epoch. */
export function readEpoch(answer: unknown): string | undefined {
  return typeof answer === 'string' && /^[0-9a-f]{8}$/.test(answer) ? answer : undefined;
}
