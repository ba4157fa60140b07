/**
 * How far an ack session has handled the stream: the greatest position P such that every event
 * received up to P is handled. Events are kept in arrival order from the first one not handled, so
 * one that fails holds P back until it is handled on its redelivery; stream positions are opaque
 * to the client (an epoch, partitions), so order is arrival order, never a comparison. An event
 * that comes again is told by any of its keys (its position, its source and id): the application
 * is handed it again only when its handling failed.
 *
 * Bounded as at-least-once consumers are (an SQS queue's maxReceiveCount, a JetStream consumer's
 * MaxDeliver and MaxAckPending): an event whose handling failed `maxAttempts` times, or the oldest
 * one not handled once more than `maxPending` entries are held behind it, is given up (counted
 * handled), so an event that always fails cannot stall the session nor pile up the events after it.
 */
const HANDLING = 0;
const HANDLED = 1;
const FAILED = 2;

export interface AckEntry {
  /** Its stream position; none when the transport gives only one per answer (long-polling). */
  position: string | undefined;
  state: typeof HANDLING | typeof HANDLED | typeof FAILED;
  keys: string[];
  /** How often the application was handed it (none for a position reached with nothing to handle). */
  tries?: number;
  /** The event (none for a position reached with nothing to handle). */
  event?: unknown;
}

export interface AckLimits {
  /** Tries of an event before it is given up (5). */
  maxAttempts?: number;
  /** Entries held before the first is given up (1000). */
  maxPending?: number;
}

export class AckPosition {
  /** The greatest position up to which everything received is handled. */
  position: string | undefined;
  /** From the first entry not handled, in arrival order. */
  private readonly entries: AckEntry[] = [];
  private readonly byKey = new Map<string, AckEntry>();
  /** Gives up the entry: reports it and counts it handled. */
  private readonly giveUp: (entry: AckEntry) => void;
  private readonly limits: AckLimits;

  constructor(giveUp: (entry: AckEntry) => void, limits: AckLimits = {}) {
    this.giveUp = giveUp;
    this.limits = limits;
  }

  /**
   * An event to handle arrived: its entry when the application is to be handed it (new, or its
   * handling failed before), undefined for a copy of one handled or still being handled. `first`:
   * not seen before (the client's dedupe window), since entries at or before P are forgotten here.
   */
  arrived(
    keys: string[],
    position: string | undefined,
    first: boolean,
    event?: unknown,
  ): AckEntry | undefined {
    for (const key of keys) {
      const known = this.byKey.get(key);
      if (known === undefined) continue;
      if (known.state !== FAILED) return undefined;
      known.state = HANDLING;
      known.tries!++;
      return known;
    }
    if (!first) return undefined;
    const entry: AckEntry = { position, state: HANDLING, keys, tries: 1, event };
    for (const key of keys) this.byKey.set(key, entry);
    this.push(entry);
    return entry;
  }

  /** A position reached with nothing to handle at it (an event of another type, a long-poll answer's cursor). True when P moved. */
  reached(position: string): boolean {
    this.push({ position, state: HANDLED, keys: [] });
    return this.advance();
  }

  /** The entry of an event still held (not yet at or before P). */
  entry(key: string): AckEntry | undefined {
    return this.byKey.get(key);
  }

  /** The application handled it. True when P moved. */
  handled(entry: AckEntry): boolean {
    entry.state = HANDLED;
    return this.advance();
  }

  /** Its handling failed: it holds P back, and its copy is handed again; given up after its last try. */
  failed(entry: AckEntry): void {
    if (entry.state !== HANDLING) return;
    entry.state = FAILED;
    if (entry.tries! >= (this.limits.maxAttempts ?? 5)) this.giveUp(entry);
  }

  /** The first entry is never handled (advance took those): past the bound, it is given up. */
  private push(entry: AckEntry): void {
    this.entries.push(entry);
    if (this.entries.length > (this.limits.maxPending ?? 1000)) this.giveUp(this.entries[0]!);
  }

  private advance(): boolean {
    const before = this.position;
    while (this.entries[0]?.state === HANDLED) {
      const entry = this.entries.shift()!;
      for (const key of entry.keys) this.byKey.delete(key);
      if (entry.position !== undefined) this.position = entry.position;
    }
    return this.position !== before;
  }
}
