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
  /** Its CloudEvent source and id, where known without reading it (unread-event.ts). */
  readonly source?: string;
  readonly id?: string;
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
  /** eventBytes of the event in each slot, as it was pushed: an eviction need not work it out again. */
  private readonly slotBytes: Float64Array;
  /**
   * Sequence number of held events by position, brought up to date only when a position is looked
   * up (seqOf): the events pushed since the last look-up are indexed then, in one go. A replica that
   * serves no resume pays no Map operation per event for it; one that does pays a set and, at the
   * eviction, a delete per event, as every push used to.
   */
  private readonly index = new Map<string, number>();
  /** Sequence number of the next event the position index has not taken in. */
  private indexedTo = 0;
  /**
   * The held events by CloudEvent source and id, for the duplicate check every event takes: chains
   * of sequence numbers in typed arrays, not a Map keyed by a joined string (that made, flattened
   * and hashed a string per event and set and deleted a Map entry: about a third of what an event
   * no connection wants cost, bench/src/unwanted-events.bench.ts). `chainHeads[hash]` is the newest
   * seq whose source and id hash there (-1: none), `olderInChain[slot]` the next older one. A chain
   * runs newest to oldest and the ring evicts oldest first, so it ends at the first seq no longer
   * held: an eviction has nothing to undo. A chain is at most `capacity` long; the hash is seeded
   * per ring, so a publisher cannot line events up on one chain on purpose.
   */
  private readonly chainHeads: Float64Array;
  private readonly olderInChain: Float64Array;
  private readonly hashSeed = (Math.random() * 0x100000000) >>> 0;
  /** Sequence number of the next event pushed; slot = seq % capacity. */
  private nextSeq = 0;
  /** Sequence number of the oldest event held. */
  private firstSeq = 0;
  private heldBytes = 0;
  readonly capacity: number;
  readonly maxBytes: number;
  /**
   * The stream's origin (the bus's position before its first message) when the replica went live on
   * a stream that had never held an event: the ring then holds everything after it until it first
   * drops an event, and it is the place of a connection made before the first event (`place`), a
   * real position that any replica can resume from through the broker (a connection without one
   * could not be resumed once the ring had turned over).
   */
  origin: string | undefined;

  constructor(capacity: number, maxBytes = Number.POSITIVE_INFINITY) {
    this.capacity = capacity;
    this.maxBytes = maxBytes;
    this.slots = new Array(capacity);
    this.slotBytes = new Float64Array(capacity);
    // A power of two at least twice the capacity: chains of one or two events.
    this.chainHeads = new Float64Array(2 ** Math.ceil(Math.log2(2 * capacity))).fill(-1);
    this.olderInChain = new Float64Array(capacity);
  }

  /** Keeps `e` as the newest event; drops the oldest ones as the count or the bytes require. */
  push(e: RingEvent): void {
    const source = sourceOf(e);
    const id = idOf(e);
    this.pushHashed(e, source !== undefined && id !== undefined ? this.hash(source, id) : -1);
  }

  /**
   * Keeps `e` as push does unless the ring holds an event with its CloudEvent source and id (a
   * source message taken in twice); false then. One hash for both the check and the push.
   */
  pushNew(e: RingEvent): boolean {
    const source = sourceOf(e);
    const id = idOf(e);
    if (source === undefined || id === undefined) {
      this.pushHashed(e, -1);
      return true;
    }
    const hash = this.hash(source, id);
    if (this.findHeld(hash, source, id)) return false;
    this.pushHashed(e, hash);
    return true;
  }

  /** Whether the ring holds an event with the same CloudEvent source and id as `e`. */
  holdsSameEvent(e: RingEvent): boolean {
    const source = sourceOf(e);
    const id = idOf(e);
    return source !== undefined && id !== undefined && this.findHeld(this.hash(source, id), source, id);
  }

  /** `hash`: of the event's source and id, or -1 when it has not both. */
  private pushHashed(e: RingEvent, hash: number): void {
    const bytes = eventBytes(e);
    while (this.size > 0 && (this.size >= this.capacity || this.heldBytes + bytes > this.maxBytes))
      this.evictOldest();
    const slot = this.nextSeq % this.capacity;
    this.slots[slot] = e;
    this.slotBytes[slot] = bytes;
    this.heldBytes += bytes;
    if (hash >= 0) {
      this.olderInChain[slot] = this.chainHeads[hash]!;
      this.chainHeads[hash] = this.nextSeq;
    }
    this.nextSeq++;
  }

  private findHeld(hash: number, source: string, id: string): boolean {
    for (let seq = this.chainHeads[hash]!; seq >= this.firstSeq; ) {
      const slot = seq % this.capacity;
      const held = this.slots[slot]!;
      if (idOf(held) === id && sourceOf(held) === source) return true;
      seq = this.olderInChain[slot]!;
    }
    return false;
  }

  /** FNV-1a of the source, a separator and the id, seeded, as an index into chainHeads. */
  private hash(source: string, id: string): number {
    let h = this.hashSeed ^ 0x811c9dc5;
    for (let i = 0; i < source.length; i++) h = Math.imul(h ^ source.charCodeAt(i), 0x01000193);
    h = Math.imul(h, 0x01000193); // the separator: ("a", "bc") and ("ab", "c") part here
    for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
    h ^= h >>> 15; // FNV's low bits alone mix poorly
    return h & (this.chainHeads.length - 1);
  }

  /** Estimated bytes of the events held (see eventBytes). */
  get bytes(): number {
    return this.heldBytes;
  }

  private evictOldest(): void {
    const seq = this.firstSeq;
    const slot = seq % this.capacity;
    if (seq < this.indexedTo) {
      // Unless a newer event has its position (a stream made anew starts its positions over).
      const { position } = this.slots[slot]!;
      if (this.index.get(position) === seq) this.index.delete(position);
    }
    this.slots[slot] = undefined;
    this.firstSeq++;
    this.heldBytes -= this.slotBytes[slot]!;
  }

  /** The sequence number of the held event at `position`, or undefined when none is held there. */
  private seqOf(position: string): number | undefined {
    // The origin stands for the place before the first event pushed, while that one is held.
    if (position === this.origin) return this.firstSeq === 0 ? -1 : undefined;
    // Evictions took out every entry of the events they evicted: past them, the index is empty.
    if (this.indexedTo < this.firstSeq) this.indexedTo = this.firstSeq;
    for (; this.indexedTo < this.nextSeq; this.indexedTo++)
      this.index.set(this.slots[this.indexedTo % this.capacity]!.position, this.indexedTo);
    return this.index.get(position);
  }

  /** Position of the newest event, or undefined before the first one. */
  get head(): string | undefined {
    return this.size === 0 ? undefined : this.slots[(this.nextSeq - 1) % this.capacity]!.position;
  }

  /** Where a connection that has had every event is: the newest event, else the origin, if known. */
  get place(): string | undefined {
    return this.head ?? this.origin;
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
    return this.seqOf(position) !== undefined;
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
    const held = this.seqOf(position);
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
    const seq = this.seqOf(position);
    if (seq === undefined) return undefined;
    const out: RingEvent[] = [];
    for (let s = seq + 1; s < this.nextSeq; s++) out.push(this.slots[s % this.capacity]!);
    return out;
  }
}

/** A CloudEvent's source and id, which together name it (the spec: unique per source), as one key. */
export function eventIdentity(e: RingEvent): string | undefined {
  const source = sourceOf(e);
  const id = idOf(e);
  return source !== undefined && id !== undefined ? identityOf(source, id) : undefined;
}

/** The event's CloudEvent source: from an unread event's headers, else from the parsed event. */
function sourceOf(e: RingEvent): string | undefined {
  if (e.source !== undefined) return e.source;
  const source = e.event['source'];
  return typeof source === 'string' ? source : undefined;
}

function idOf(e: RingEvent): string | undefined {
  if (e.id !== undefined) return e.id;
  const id = e.event['id'];
  return typeof id === 'string' ? id : undefined;
}

/** The identity key of a source and id (one key for the ring's index, read or unread). */
export function identityOf(source: string, id: string): string {
  return `${source}\u0000${id}`;
}
