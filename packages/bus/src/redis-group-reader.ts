/**
 * A member of a consumer group on a Redis stream. Each member reads as a consumer of its own name
 * with XREADGROUP (`>`: entries no member has been given yet) and acknowledges with XACK once the
 * handler is done. Entries given to a member that died before acknowledging stay pending; every
 * member takes over those idle longer than `claimIdleMs` (XAUTOCLAIM), so a replica that dies
 * loses nothing. Entries whose handler threw NotHandledError are not acknowledged but made
 * claimable at once: the next claim round of any member (this one's within a second) takes them, so a
 * member closing in the middle of one hands it on without waiting for it to go idle.
 */
import type { RedisClient } from '@gatehouse/store';
import type { StreamEntry } from './redis-stream-entry.ts';
import { streamEpoch } from './redis-stream-epoch.ts';
import { type ReaderSetup, StreamReader } from './redis-stream-reader.ts';

/** Pause before a member claims back entries it did not handle (no tight loop on one entry). */
const REDELIVERY_DELAY_MS = 500;

export interface GroupMembership {
  group: string;
  consumer: string;
  /** How long an entry stays pending with a silent consumer before another member takes it. */
  claimIdleMs: number;
}

export class GroupReader extends StreamReader {
  private readonly membership: GroupMembership;
  private readonly claimEveryMs: number;
  private nextClaimAt = 0;
  private lastHandled: string | undefined;

  constructor(setup: ReaderSetup, membership: GroupMembership) {
    const claimEveryMs = Math.max(100, membership.claimIdleMs / 2);
    // Reads must return often enough for the claim round to run on time.
    super({ ...setup, blockMs: Math.min(setup.blockMs, claimEveryMs) });
    this.membership = membership;
    this.claimEveryMs = claimEveryMs;
  }

  protected async readOnce(): Promise<void> {
    try {
      if (Date.now() >= this.nextClaimAt) {
        await this.claimAbandoned();
        this.nextClaimAt = Date.now() + this.claimEveryMs;
      }
      await this.readNew();
    } catch (err) {
      if (!String((err as Error).message).startsWith('NOGROUP')) throw err;
      // The stream or the group was deleted (or lost with an unpersisted Redis): set it up again
      // where this member left off, or at the end when it has handled nothing yet.
      await createGroup(this.setup.commands, this.setup.key, this.membership.group, this.lastHandled ?? '$');
      // A stream made anew has another epoch, which what is read from it from now on carries.
      this.epoch = await streamEpoch(this.setup.commands, this.setup.key, 'keep');
    }
  }

  protected override async afterStop(): Promise<void> {
    const { commands, key } = this.setup;
    const { group, consumer } = this.membership;
    try {
      // A consumer that holds nothing is forgotten; one that does stays until its entries are claimed.
      const pending = await commands.xpending(key, group, '-', '+', 1, consumer);
      if (pending.length === 0) await commands.xgroup('DELCONSUMER', key, group, consumer);
    } catch {
      // Redis unreachable: the idle consumer stays listed, which harms nobody.
    }
  }

  private async readNew(): Promise<void> {
    const { connection, key, blockMs, batchSize } = this.setup;
    const { group, consumer } = this.membership;
    const reply = await connection.xreadgroupBuffer(
      'GROUP',
      group,
      consumer,
      'COUNT',
      batchSize,
      'BLOCK',
      blockMs,
      'STREAMS',
      key,
      '>',
    );
    await this.handleAndAck((reply?.[0]?.[1] ?? []) as StreamEntry[]);
  }

  private async claimAbandoned(): Promise<void> {
    const { connection, key, batchSize } = this.setup;
    const { group, consumer, claimIdleMs } = this.membership;
    let cursor = '0-0';
    do {
      // ioredis has no Buffer variant of XAUTOCLAIM; values must stay bytes.
      const args = [key, group, consumer, claimIdleMs, cursor, 'COUNT', batchSize];
      const [next, entries] = (await connection.callBuffer('XAUTOCLAIM', args)) as [Buffer, StreamEntry[]];
      await this.handleAndAck(entries);
      cursor = next.toString();
    } while (cursor !== '0-0' && !this.stopped);
  }

  private async handleAndAck(entries: StreamEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const { left } = await this.handle(entries, true);
    const handled = entries.slice(0, entries.length - left.length);
    const { commands, key } = this.setup;
    const { group, consumer, claimIdleMs } = this.membership;
    if (handled.length > 0) {
      // An ack that fails leaves the entries pending: they are claimed again later (at least once).
      await commands.xack(key, group, ...handled.map(([id]) => id));
      this.lastHandled = handled.at(-1)![0].toString();
    }
    if (left.length > 0) {
      // Redis has no "nack": claiming them for this member with an idle time already at the
      // take-over threshold lets the next claim round of any member (this one too) have them.
      const ids = left.map(([id]) => id.toString());
      await commands.call('XCLAIM', key, group, consumer, 0, ...ids, 'IDLE', claimIdleMs, 'JUSTID');
      // This member goes on too: its own next claim round comes soon, not after claimIdleMs / 2.
      this.nextClaimAt = Math.min(this.nextClaimAt, Date.now() + REDELIVERY_DELAY_MS);
    }
  }
}

/** Creates the group (and the stream) unless it exists; a new group starts after `startAfter`. */
export async function createGroup(commands: RedisClient, topic: string, group: string, startAfter: string) {
  try {
    await commands.xgroup('CREATE', topic, group, startAfter, 'MKSTREAM');
  } catch (err) {
    if (!String((err as Error).message).startsWith('BUSYGROUP')) throw err;
  }
}
