/**
 * Where a broadcast subscriber on a Redis stream starts: after the stream's last generated id (live
 * only), after `from` (replay), or after the entry before the newest `last` ones (tail). Settled
 * before subscribe resolves, so nothing published afterwards is missed.
 *
 * Retention: XADD MAXLEN and XTRIM remove the oldest entries. While nothing was ever removed
 * (Redis 7 counts the entries added), every position up to the end is held. Otherwise a `from`
 * older than the first entry still held may have lost entries after it, so it is refused as
 * expired. This is conservative by one entry: a `from` naming exactly the last entry trimmed away lost nothing, but Redis does not
 * tell that entry's id. A `from` after the last generated id is unknown to the stream.
 *
 * Positions carry the stream's epoch (redis-stream-epoch.ts): a `from` of another incarnation of
 * the stream (deleted and made anew, lost with an unpersisted Redis) is refused (reason `epoch`);
 * one without an epoch (made before epochs) is read as before. A subscriber makes a missing stream
 * (empty, with its epoch), so that the origin it tells belongs to the incarnation it reads.
 */
import type { RedisClient } from '@gatehouse/store';
import { BusError, type Position, PositionUnavailableError } from './bus.ts';
import { assertSameEpoch, type EpochPosition, splitEpoch, withEpoch } from './position-epoch.ts';
import { queueStreamEpoch, readEpoch } from './redis-stream-epoch.ts';

const streamIdPattern = /^(\d{1,20})-(\d{1,20})$/;

export interface BroadcastStartPoint {
  /** The reader's first XREAD asks for entries after this id. */
  startAfter: string;
  /** The stream's epoch, which the positions of what the subscriber reads carry. */
  epoch: string | undefined;
  /** The stream's last generated id when the subscriber went live; undefined for a new stream. */
  liveAfter: Position | undefined;
  /** `0-0` while the stream holds every entry it ever had (none trimmed); undefined otherwise. */
  origin: Position | undefined;
}

interface StreamExtent {
  epoch: string | undefined;
  lastGenerated: string;
  firstEntry: string | undefined;
  /** Nothing was ever trimmed or deleted (Redis 7 counts entries added; unknown before). */
  complete: boolean;
}

export async function broadcastStart(
  client: RedisClient,
  topic: string,
  options: { from?: Position; last?: number },
): Promise<BroadcastStartPoint> {
  const from = options.from === undefined ? undefined : parsePosition(options.from);
  const extent = await streamExtent(client, topic);
  const { epoch } = extent;
  const liveAfter = extent.lastGenerated === '0-0' ? undefined : withEpoch(extent.lastGenerated, epoch);
  const origin = extent.complete ? withEpoch('0-0', epoch) : undefined;
  if (from !== undefined) {
    assertSameEpoch(options.from!, from, epoch, topic);
    assertRetained(options.from!, from.place, extent);
    return { startAfter: from.place, epoch, liveAfter, origin };
  }
  if (options.last !== undefined && options.last > 0) {
    const newest = await client.xrevrange(topic, extent.lastGenerated, '-', 'COUNT', options.last + 1);
    const before = newest.length > options.last ? newest.at(-1)![0] : '0-0';
    return { startAfter: before, epoch, liveAfter, origin };
  }
  return { startAfter: extent.lastGenerated, epoch, liveAfter, origin };
}

/**
 * Orders two positions (stream ids, with or without an epoch, which takes no part); throws
 * PositionUnavailableError for text that is not one.
 */
export function compareStreamIds(a: string, b: string): number {
  const [am, as] = streamIdOf(parsePosition(a).place);
  const [bm, bs] = streamIdOf(parsePosition(b).place);
  return am === bm ? (as === bs ? 0 : as < bs ? -1 : 1) : am < bm ? -1 : 1;
}

export function parsePosition(position: Position): EpochPosition {
  return splitEpoch(position, streamIdPattern, 'redis stream id (<ms>-<seq>)');
}

function streamIdOf(id: string): [bigint, bigint] {
  const match = streamIdPattern.exec(id)!;
  return [BigInt(match[1]!), BigInt(match[2]!)];
}

/** `place`: the stream id of the position `from`. */
function assertRetained(from: Position, place: string, extent: StreamExtent): void {
  if (compareStreamIds(place, extent.lastGenerated) > 0)
    throw new PositionUnavailableError(from, 'unknown', `the stream ends at ${extent.lastGenerated}`);
  if (extent.complete) return;
  const oldest = extent.firstEntry;
  if (oldest === undefined && compareStreamIds(place, extent.lastGenerated) < 0)
    throw new PositionUnavailableError(from, 'expired', 'the stream holds no entries any more');
  if (oldest !== undefined && compareStreamIds(place, oldest) < 0)
    throw new PositionUnavailableError(from, 'expired', `the oldest entry held is ${oldest}`);
}

/**
 * The stream's epoch (the stream made, empty, when missing) and XINFO STREAM's last generated id
 * and first entry, read together in one MULTI, so both are of one incarnation.
 */
async function streamExtent(client: RedisClient, topic: string): Promise<StreamExtent> {
  const answers = await queueStreamEpoch(client.multi(), topic, 'make').xinfo('STREAM', topic).exec();
  if (!answers) throw new BusError(`the look at stream ${topic} was aborted`);
  for (const [err] of answers) if (err) throw err;
  const epoch = readEpoch(answers[0]![1]);
  const info = answers[1]![1] as unknown[];
  const field = (name: string) => (info.includes(name) ? info[info.indexOf(name) + 1] : undefined);
  const first = field('first-entry') as [string, unknown] | null;
  const added = field('entries-added');
  return {
    epoch,
    lastGenerated: String(field('last-generated-id')),
    firstEntry: first?.[0],
    complete: added !== undefined && Number(added) === Number(field('length')),
  };
}
