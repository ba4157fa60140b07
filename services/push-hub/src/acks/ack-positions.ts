/**
 * The acknowledged position of each ack session, in the store, forward-only: an acknowledgement
 * moves it only to a greater position of the stream's current epoch (one of the current epoch
 * replaces a stored one of an older epoch); an equal or smaller one changes nothing. Concurrent
 * writers (any replica answers an ack) meet in compareAndSet: read, compare, set only over what
 * was read, and read again when another came between, a bounded number of times.
 */
import type { Store } from '@gatehouse/store';
import { HttpError } from '@gatehouse/service-kit';
import { type AckSession, subjectIndexKey } from './ack-session.ts';

/** What the positions are checked against: the fan-out stream as this replica reads it. */
export interface AckStream {
  /** The newest position this replica has read (or the stream's origin); undefined before any. */
  head(): string | undefined;
  /** Bus.comparePositions: throws for a malformed position. */
  compare(a: string, b: string): number;
  /** Bus.positionEpoch: undefined for a position without one. */
  epochOf(position: string): string | undefined;
}

export interface AckPositionsOptions {
  store: Store;
  stream: AckStream;
  /** ACK_SESSION_TTL in seconds, refreshed on each write. */
  ttlSeconds: number;
  /** ACK_MAX_SESSIONS_PER_SUBJECT. */
  maxSessionsPerSubject: number;
  /**
   * How long an acknowledgement of a position this replica has not read yet waits for it: the
   * replica that sent the event may read the stream a moment ahead of this one.
   */
  aheadWaitMs?: number;
}

/** Positions are short (an offset, a stream id, an epoch). */
export const MAX_POSITION_BYTES = 256;
/** compareAndSet rounds before giving up on a session written that often at the same moment. */
const MAX_TRIES = 16;

export type AckOutcome = 'advanced' | 'unchanged';

export class AckPositions {
  private readonly options: AckPositionsOptions;

  constructor(options: AckPositionsOptions) {
    this.options = options;
  }

  /** The session's acknowledged position; undefined when the store holds none. */
  read(session: AckSession): Promise<string | undefined> {
    return this.options.store.get(session.key);
  }

  /** Records that the session handled everything up to and including `position`. */
  async advance(session: AckSession, position: string): Promise<AckOutcome> {
    this.checkWellFormed(position);
    await this.checkWithinStream(position);
    const { store, ttlSeconds } = this.options;
    for (let i = 0; i < MAX_TRIES; i++) {
      const stored = await store.get(session.key);
      if (stored === undefined) await this.checkRoomFor(session);
      else if (!this.isAhead(position, stored)) return 'unchanged';
      if (await store.compareAndSet(session.key, stored, position, { ttlSeconds })) {
        if (stored !== undefined) await this.keepCounted(session);
        return 'advanced';
      }
    }
    throw new HttpError(503, 'The acknowledged position is being written by many at once; retry.');
  }

  /**
   * Gives a session that has no position yet `position` (the place its connection started at), so
   * that its next connection starts there rather than after the client's last received event;
   * false when it has one already, or when `position` is not one an ack could give it: the place
   * a connection started at may be the client's own `since` or `Last-Event-ID` text (a position
   * far ahead, which skipped what came before it, or 5,000 bytes of anything were written).
   * Past ACK_MAX_SESSIONS_PER_SUBJECT it throws the 409.
   */
  async startAt(session: AckSession, position: string): Promise<boolean> {
    const { store, ttlSeconds } = this.options;
    if (!this.isWithinStream(position)) return false;
    if ((await store.get(session.key)) !== undefined) return false;
    await this.checkRoomFor(session);
    return store.compareAndSet(session.key, undefined, position, { ttlSeconds });
  }

  /** Whether `a` acknowledges more than `b`: greater within one epoch, or `b` of another epoch. */
  isAhead(a: string, b: string): boolean {
    const { stream } = this.options;
    try {
      if (stream.epochOf(a) !== stream.epochOf(b)) return true;
      return stream.compare(a, b) > 0;
    } catch {
      // A stored value no position parses as (written by hand, an older format): replaced.
      return true;
    }
  }

  /** Whether `acked` covers `position` (same epoch, at or after it). */
  covers(acked: string | undefined, position: string): boolean {
    if (acked === undefined) return false;
    const { stream } = this.options;
    try {
      return stream.epochOf(acked) === stream.epochOf(position) && stream.compare(acked, position) >= 0;
    } catch {
      return false;
    }
  }

  /** checkWellFormed and checkWithinStream without the wait, as a yes or no. */
  private isWithinStream(position: string): boolean {
    const { stream } = this.options;
    try {
      this.checkWellFormed(position);
      const head = stream.head();
      if (head === undefined) return true;
      return stream.epochOf(position) === safeEpoch(stream, head) && stream.compare(position, head) <= 0;
    } catch {
      return false;
    }
  }

  private checkWellFormed(position: string): void {
    if (position === '' || Buffer.byteLength(position) > MAX_POSITION_BYTES)
      throw new HttpError(400, `position: expected a stream position (1 to ${MAX_POSITION_BYTES} bytes)`);
    try {
      this.options.stream.compare(position, position);
    } catch {
      throw new HttpError(400, 'position: not a stream position');
    }
  }

  /**
   * 409 for a position of another epoch than the stream's now, or past its head: a client cannot
   * acknowledge events it was never sent.
   */
  private async checkWithinStream(position: string): Promise<void> {
    const { stream } = this.options;
    const head = stream.head();
    if (head === undefined) return;
    // One without an epoch on a stream whose positions carry one is of another epoch too: read as
    // the same, it would replace a stored one of the current epoch, moving it anywhere.
    if (stream.epochOf(position) !== safeEpoch(stream, head))
      throw new HttpError(409, "position: of another epoch than the stream's current one");
    if (await this.reaches(position)) return;
    throw new HttpError(409, "position: ahead of the stream's head (an event not sent yet)");
  }

  /** Whether this replica's head reaches `position`, waiting a moment for it when it does not yet. */
  private async reaches(position: string): Promise<boolean> {
    const { stream } = this.options;
    const deadline = Date.now() + (this.options.aheadWaitMs ?? 1000);
    for (;;) {
      const head = stream.head();
      if (head !== undefined && stream.compare(position, head) <= 0) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /**
   * A new session name of the subject: 409 past ACK_MAX_SESSIONS_PER_SUBJECT (the names of
   * sessions that expired meanwhile are dropped first). The subject's names are one value written
   * with compareAndSet, so that first acks of many new names at once cannot all see room: a list
   * appended to after a read let 59 of 60 names sent together in past a bound of 4. Each name
   * keeps when it was let in: one let in a moment ago whose position is not written yet is not
   * taken for an expired one.
   */
  private async checkRoomFor(session: AckSession): Promise<void> {
    const { store, maxSessionsPerSubject: max, ttlSeconds } = this.options;
    const indexKey = subjectIndexKey(session);
    for (let i = 0; i < MAX_TRIES; i++) {
      const stored = await store.get(indexKey);
      let entries = entriesOf(stored);
      if (entries.some((e) => e.name === session.name)) return;
      if (entries.length >= max) entries = await this.living(session, entries);
      if (entries.length >= max)
        throw new HttpError(
          409,
          `session: this subject holds ${max} ack sessions already (ACK_MAX_SESSIONS_PER_SUBJECT); reuse one`,
        );
      const next = textOf([...entries, { name: session.name, since: Date.now() }]);
      if (await store.compareAndSet(indexKey, stored, next, { ttlSeconds })) return;
    }
    throw new HttpError(503, "The subject's ack sessions are being written by many at once; retry.");
  }

  /**
   * A session kept alive by acks keeps its name's list alive as long: else the list expired
   * ACK_SESSION_TTL after its last new name, and a subject acking its sessions now and then got
   * ACK_MAX_SESSIONS_PER_SUBJECT more names each time. A list gone meanwhile takes the name again.
   */
  private async keepCounted(session: AckSession): Promise<void> {
    const { store, ttlSeconds } = this.options;
    if (await store.touch(subjectIndexKey(session), ttlSeconds)) return;
    // Recorded all the same: the ack is taken, only the count of this older session is at stake.
    await this.checkRoomFor(session).catch(() => {});
  }

  /** The entries whose session the store holds, or that were let in too lately to be written yet. */
  private async living(session: AckSession, entries: IndexEntry[]): Promise<IndexEntry[]> {
    const prefix = session.key.slice(0, session.key.length - session.name.length);
    const recent = Date.now() - Math.min(NEW_NAME_GRACE_MS, this.options.ttlSeconds * 1000);
    const held = await Promise.all(
      entries.map((e) => e.since > recent || this.options.store.exists(prefix + e.name)),
    );
    return entries.filter((_, i) => held[i]);
  }
}

/**
 * How long a name let in may go without its position before it counts as expired (its position
 * is written right after; at most ACK_SESSION_TTL).
 */
const NEW_NAME_GRACE_MS = 10_000;

interface IndexEntry {
  name: string;
  since: number;
}

/** A subject's index value: `name@ms` entries, space-separated (names hold neither: ack-session.ts). */
function entriesOf(value: string | undefined): IndexEntry[] {
  if (value === undefined || value === '') return [];
  return value.split(' ').map((entry) => {
    const [name = '', since = '0'] = entry.split('@');
    return { name, since: Number(since) || 0 };
  });
}

function textOf(entries: IndexEntry[]): string {
  return entries.map((e) => `${e.name}@${e.since}`).join(' ');
}

function safeEpoch(stream: AckStream, position: string): string | undefined {
  try {
    return stream.epochOf(position);
  } catch {
    return undefined;
  }
}
