/**
 * A broadcast subscriber on a Redis stream: XREAD BLOCK from the id it last handled. It starts at
 * the stream's last entry when it subscribed (or at `from`), never at `$` per read, which would skip
 * whatever arrived while the previous batch was being handled.
 *
 * Before it hands on a batch it looks at the stream's epoch (one script call per batch, not per
 * entry): a stream deleted and made anew meanwhile (or lost with an unpersisted Redis) holds ids that
 * may come after the last one handled, so XREAD gives no sign of it; its entries would go out in the
 * old epoch, its first ones skipped. Then the batch is dropped and the new stream read from its
 * start, in its new epoch.
 */
import { type ReaderSetup, StreamReader } from './redis-stream-reader.ts';
import type { StreamEntry } from './redis-stream-entry.ts';
import { streamEpoch } from './redis-stream-epoch.ts';

export class BroadcastReader extends StreamReader {
  private lastId: string;

  constructor(setup: ReaderSetup, startAfter: string) {
    super(setup);
    this.lastId = startAfter;
  }

  protected async readOnce(): Promise<void> {
    const { connection, key, blockMs, batchSize } = this.setup;
    const reply = await connection.xreadBuffer(
      'COUNT',
      batchSize,
      'BLOCK',
      blockMs,
      'STREAMS',
      key,
      this.lastId,
    );
    const entries = (reply?.[0]?.[1] ?? []) as StreamEntry[];
    if (entries.length > 0 && (await this.madeAnew())) return;
    this.lastId = (await this.handle(entries)).last ?? this.lastId;
  }

  /**
   * Whether the stream is another incarnation than the one read so far; if so, reads it from its
   * start from now on. A stream missing now (deleted after the read) changes nothing yet.
   */
  private async madeAnew(): Promise<boolean> {
    const now = await streamEpoch(this.setup.commands, this.setup.key, 'keep');
    if (now === undefined || now === this.epoch) return false;
    const before = this.epoch;
    this.epoch = now;
    // No epoch was known when it started (a hand-made epoch group): nothing tells a change.
    if (before === undefined) return false;
    this.lastId = '0-0';
    return true;
  }
}
