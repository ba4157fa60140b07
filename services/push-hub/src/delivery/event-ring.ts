/**
 * The most recent events of the fan-out stream, by stream position. Every hub replica consumes the
 * whole stream, so every replica holds the same positions: a client resuming with Last-Event-ID (SSE)
 * or a long-poll cursor is served by whichever replica it reaches.
 *
 * It is bounded by count (`capacity`) and by the bytes its events take (`maxBytes`, estimated by
 * eventBytes): a few huge events must not hold as much memory as `capacity` of them would.
 *
 * It also knows the CloudEvents it holds by source and id, so the hub can tell an event that comes
 * a second time (a source message the publishers took in twice, at least once) from a new one.
 */

export interface RingEvent {
  position: string;
  type: string;
  /** The parsed CloudEvent, for filtering. */
  event: Record<string, unknown>;
  /** The CloudEvent JSON text, as delivered. */
  json: string;
  /** Its CloudEvent source and id (eventIdentity), where known without reading it (unread-event.ts). */
  readonly identity?: string;
  /** At least the length of `json`, where known without making the text; fixed (unread-event.ts). */
  readonly textLength?: number;
}

/**
 * Estimated memory of a held event: its JSON text, the same again for the parsed CloudEvent kept for
 * filtering, its position and type, and the index entries. On the high side for ASCII events. An
 * unread event counts its bytes as if it were read (it may be, by a resume).
 */
export function eventBytes(e: RingEvent): number {
  return 2 * (e.textLength ?? e.json.length) + 2 * e.position.length + e.type.length + 200;
}

export class EventRing {
  private readonly slots: Array<RingEvent | undefined>;
  private readonly index = new Map<string, number>();
  /** Sequence number of each held event by its CloudEvent identity (eventIdentity). */
  private readonly identities = new Map<string, number>();
  /** Sequence number of the next event pushed; slot = seq % capacity. */
  private nextSeq = 0;
  /** Sequence number of the oldest event held. */
  private firstSeq = 0;
  private heldBytes = 0;
  readonly capacity: number;
  readonly maxBytes: number;

  constructor(capacity: number, maxBytes = Number.POSITIVE_INFINITY) {
    this.capacity = capacity;
    this.maxBytes = maxBytes;
    this.slots = new Array(capacity);
  }

  /** Keeps `e` as the newest event; drops the oldest ones as the count or the bytes require. */
  push(e: RingEvent): void {
    const bytes = eventBytes(e);
    while (this.size > 0 && (this.size >= this.capacity || this.heldBytes + bytes > this.maxBytes))
      this.evictOldest();
    this.slots[this.nextSeq % this.capacity] = e;
    this.heldBytes += bytes;
    this.index.set(e.position, this.nextSeq);
    const identity = eventIdentity(e);
    if (identity !== undefined) this.identities.set(identity, this.nextSeq);
    this.nextSeq++;
  }

  /** Estimated bytes of the events held (see eventBytes). */
  get bytes(): number {
    return this.heldBytes;
  }

  private evictOldest(): void {
    const seq = this.firstSeq;
    const slot = seq % this.capacity;
    const evicted = this.slots[slot]!;
    this.slots[slot] = undefined;
    this.firstSeq++;
    this.heldBytes -= eventBytes(evicted);
    this.index.delete(evicted.position);
    const identity = eventIdentity(evicted);
    if (identity !== undefined && this.identities.get(identity) === seq) this.identities.delete(identity);
  }

  /** Whether the ring holds an event with the same CloudEvent source and id as `e`. */
  holdsSameEvent(e: RingEvent): boolean {
    const identity = eventIdentity(e);
    return identity !== undefined && this.identities.has(identity);
  }

  /** Position of the newest event, or undefined before the first one. */
  get head(): string | undefined {
    return this.size === 0 ? undefined : this.slots[(this.nextSeq - 1) % this.capacity]!.position;
  }

  /** Events held. */
  get size(): number {
    return this.nextSeq - this.firstSeq;
  }

  /** Position of the oldest event still held, or undefined before the first one. */
  get oldest(): string | undefined {
    return this.size === 0 ? undefined : this.slots[this.firstSeq % this.capacity]!.position;
  }

  has(position: string): boolean {
    return this.index.has(position);
  }

  /**
   * Sequence numbers name the events pushed, 0 for the first: `end` is the next one to come, and
   * `get(seq)` is the event while the ring holds it. A connection catching up keeps its place as one.
   */
  get end(): number {
    return this.nextSeq;
  }

  get(seq: number): RingEvent | undefined {
    return seq >= this.firstSeq && seq < this.nextSeq ? this.slots[seq % this.capacity] : undefined;
  }

  /**
   * The sequence number of the first event after `position` when the ring holds every event after
   * it: the position is held, or (with the stream's order) lies between the oldest and the newest
   * held. Undefined otherwise (older, beyond the newest, malformed).
   */
  seqAfter(position: string, compare?: (a: string, b: string) => number): number | undefined {
    const held = this.index.get(position);
    if (held !== undefined) return held + 1;
    if (compare === undefined || this.size === 0) return undefined;
    if (compare(this.oldest!, position) > 0 || compare(position, this.head!) > 0) return undefined;
    let seq = this.nextSeq;
    while (seq > this.firstSeq && compare(this.slots[(seq - 1) % this.capacity]!.position, position) > 0)
      seq--;
    return seq;
  }

  /** Every event since the replica started; undefined once the oldest ones were evicted. */
  fromStart(): RingEvent[] | undefined {
    if (this.firstSeq > 0) return undefined;
    return this.slots.slice(0, this.nextSeq) as RingEvent[];
  }

  /**
   * Events whose position comes after `position` by the stream's order, oldest first, for a
   * position the ring does not hold itself (one between two held events, or beyond the newest).
   */
  since(position: string, compare: (a: string, b: string) => number): RingEvent[] {
    let seq = this.nextSeq;
    while (seq > this.firstSeq && compare(this.slots[(seq - 1) % this.capacity]!.position, position) > 0)
      seq--;
    const out: RingEvent[] = [];
    for (let s = seq; s < this.nextSeq; s++) out.push(this.slots[s % this.capacity]!);
    return out;
  }

  /** Events after `position`, oldest first; undefined when the position is not held (too old or unknown). */
  after(position: string): RingEvent[] | undefined {
    const seq = this.index.get(position);
    if (seq === undefined) return undefined;
    const out: RingEvent[] = [];
    for (let s = seq + 1; s < this.nextSeq; s++) out.push(this.slots[s % this.capacity]!);
    return out;
  }
}

/** A CloudEvent's source and id, which together name it (the spec: unique per source). */
export function eventIdentity(e: RingEvent): string | undefined {
  if (e.identity !== undefined) return e.identity;
  const { source, id } = e.event;
  return typeof source === 'string' && typeof id === 'string' ? identityOf(source, id) : undefined;
}

/** The identity key of a source and id (one key for the ring's index, read or unread). */
export function identityOf(source: string, id: string): string {
  return `${source}\u0000${id}`;
}
