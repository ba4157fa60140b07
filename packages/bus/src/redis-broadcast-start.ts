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
 */
import type { RedisClient } from '@gatehouse/store';
import { type Position, PositionUnavailableError } from './bus.ts';

const streamIdPattern = /^(\d{1,20})-(\d{1,20})$/;

export interface BroadcastStartPoint {
  /** The reader's first XREAD asks for entries after this id. */
  startAfter: string;
  /** The stream's last generated id when the subscriber went live; undefined for a new stream. */
  liveAfter: Position | undefined;
  /** `0-0` while the stream holds every entry it ever had (none trimmed); undefined otherwise. */
  origin: Position | undefined;
}

interface StreamExtent {
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
  if (options.from !== undefined) parseStreamId(options.from);
  const extent = await streamExtent(client, topic);
  const liveAfter = extent.lastGenerated === '0-0' ? undefined : extent.lastGenerated;
  const origin = extent.complete ? '0-0' : undefined;
  if (options.from !== undefined) {
    assertRetained(options.from, extent);
    return { startAfter: options.from, liveAfter, origin };
  }
  if (options.last !== undefined && options.last > 0) {
    const newest = await client.xrevrange(topic, extent.lastGenerated, '-', 'COUNT', options.last + 1);
    const before = newest.length > options.last ? newest.at(-1)![0] : '0-0';
    return { startAfter: before, liveAfter, origin };
  }
  return { startAfter: extent.lastGenerated, liveAfter, origin };
}

/** Orders two stream ids; throws PositionUnavailableError for text that is not one. */
export function compareStreamIds(a: string, b: string): number {
  const [am, as] = parseStreamId(a);
  const [bm, bs] = parseStreamId(b);
  return am === bm ? (as === bs ? 0 : as < bs ? -1 : 1) : am < bm ? -1 : 1;
}

function parseStreamId(id: string): [bigint, bigint] {
  const match = streamIdPattern.exec(id);
  if (!match) throw new PositionUnavailableError(id, 'unknown', 'not a redis stream id (<ms>-<seq>)');
  return [BigInt(match[1]!), BigInt(match[2]!)];
}

function assertRetained(from: string, extent: StreamExtent): void {
  if (compareStreamIds(from, extent.lastGenerated) > 0)
    throw new PositionUnavailableError(from, 'unknown', `the stream ends at ${extent.lastGenerated}`);
  if (extent.complete) return;
  const oldest = extent.firstEntry;
  if (oldest === undefined && compareStreamIds(from, extent.lastGenerated) < 0)
    throw new PositionUnavailableError(from, 'expired', 'the stream holds no entries any more');
  if (oldest !== undefined && compareStreamIds(from, oldest) < 0)
    throw new PositionUnavailableError(from, 'expired', `the oldest entry held is ${oldest}`);
}

/** XINFO STREAM's last generated id and first entry; a missing stream is an empty one. */
async function streamExtent(client: RedisClient, topic: string): Promise<StreamExtent> {
  let info: unknown[];
  try {
    info = (await client.xinfo('STREAM', topic)) as unknown[];
  } catch (err) {
    if (/no such key/i.test((err as Error).message))
      return { lastGenerated: '0-0', firstEntry: undefined, complete: true };
    throw err;
  }
  const field = (name: string) => (info.includes(name) ? info[info.indexOf(name) + 1] : undefined);
  const first = field('first-entry') as [string, unknown] | null;
  const added = field('entries-added');
  return {
    lastGenerated: String(field('last-generated-id')),
    firstEntry: first?.[0],
    complete: added !== undefined && Number(added) === Number(field('length')),
  };
}
