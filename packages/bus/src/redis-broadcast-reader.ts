/**
 * A broadcast subscriber on a Redis stream: XREAD BLOCK from the id it last handled. It starts at
 * the stream's last entry when it subscribed (or at `from`), never at `$` per read, which would skip
 * whatever arrived while the previous batch was being handled.
 *
 * With every read it looks at the stream's epoch: the look-up is pipelined behind the XREAD on the
 * same connection, so Redis runs it as soon as the read returns, at no extra round trip. A stream
 * deleted and made anew meanwhile (or lost with an unpersisted Redis) holds ids that may come after
 * the last one handled, so XREAD gives no sign of it; its entries would go out in the old epoch, its
 * first ones skipped. Then the batch is dropped and the new stream read from its start, in its new
 * epoch.
 */
import { type ReaderSetup, StreamReader } from './redis-stream-reader.ts';
import type { StreamEntry } from './redis-stream-entry.ts';
import { queueStreamEpoch, readEpoch } from './redis-stream-epoch.ts';

export class BroadcastReader extends StreamReader {
  private lastId: string;

  constructor(setup: ReaderSetup, startAfter: string) {
    super(setup);
    this.lastId = startAfter;
  }

  protected async readOnce(): Promise<void> {
    const { connection, key, blockMs, batchSize } = this.setup;
    const read = connection
      .pipeline()
      .xreadBuffer('COUNT', batchSize, 'BLOCK', blockMs, 'STREAMS', key, this.lastId);
    const answers = await queueStreamEpoch(read, key, 'keep').exec();
    for (const [err] of answers ?? []) if (err) throw err;
    const reply = answers?.[0]?.[1] as [unknown, StreamEntry[]][] | null | undefined;
    const entries = reply?.[0]?.[1] ?? [];
    if (entries.length > 0 && this.madeAnew(readEpoch(answers?.[1]?.[1]))) return;
    this.lastId = (await this.handle(entries)).last ?? this.lastId;
  }

  /**
   * Whether the stream is another incarnation (`now`) than the one read so far; if so, reads it from
   * its start from now on. A stream missing now (deleted after the read) changes nothing yet.
   */
  private madeAnew(now: string | undefined): boolean {
    if (now === undefined || now === this.epoch) return false;
    const before = this.epoch;
    this.epoch = now;
    // No epoch was known when it started (a hand-made epoch group): nothing tells a change.
    if (before === undefined) return false;
    this.lastId = '0-0';
    return true;
  }
}
