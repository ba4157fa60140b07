/**
 * A broadcast subscriber on a Redis stream: XREAD BLOCK from the id it last handled. It starts at
 * the stream's last entry when it subscribed (or at `from`), never at `$` per read, which would skip
 * whatever arrived while the previous batch was being handled.
 */
import { type ReaderSetup, StreamReader } from './redis-stream-reader.ts';
import type { StreamEntry } from './redis-stream-entry.ts';

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
    this.lastId = (await this.handle(entries)).last ?? this.lastId;
  }
}
