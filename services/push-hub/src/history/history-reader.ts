/**
 * A page of history: the newest events a subscription takes, newest first (as Centrifugo's history
 * with `reverse: true`), before a position when one is given. Served from the ring, and past it
 * from the broker's tail (broker-tail.ts), the way a resume is. A page is bounded in events
 * (`limit`) and in bytes; `next` is where the following page starts (`before=next`), absent when
 * nothing older is known.
 */
import type { Position } from '@gatehouse/bus';
import type { EventRing, RingEvent } from '../delivery/index.ts';
import { type BrokerTailOptions, readBrokerTail } from '../delivery/index.ts';

export interface HistorySource {
  ring: EventRing;
  compare(a: Position, b: Position): number;
  /** Whether a position carries another epoch than the stream's now (Hub.epochChanged). */
  epochChanged(position: Position): boolean;
  /** Whether the ring has every event of `types` after `position` (interest routing may skip types). */
  covers(types: Iterable<string>, position: Position): boolean;
  /** Whether the ring holds every event of the stream (Hub.ringHoldsWholeStream): then nothing is older. */
  wholeStream(): boolean;
  /** The broker's tail, where the stream can be replayed; without it, history is the ring's. */
  tail: BrokerTailOptions | undefined;
}

export interface HistoryRequest {
  types: readonly string[];
  /** Whether the subscription takes the event (its type first: an unread event of another type stays unread). */
  wanted(e: RingEvent): boolean;
  limit: number;
  before: Position | undefined;
  /** Bytes of event JSON a page holds at most (at least one event). */
  maxBytes: number;
}

export interface HistoryPage {
  /** Newest first. */
  events: RingEvent[];
  next: Position | undefined;
}

export async function readHistory(source: HistorySource, req: HistoryRequest): Promise<HistoryPage> {
  const page = new PageBuilder(req);
  const { ring } = source;
  const ringUsable = ring.oldest !== undefined && source.covers(req.types, ring.oldest);
  if (ringUsable) fromRing(source, req, page);
  const ringIsAll = ringUsable && source.wholeStream();
  if (page.full || ringIsAll || !source.tail) return page.result();
  const boundary = ringUsable ? olderOf(source, ring.oldest!, req.before) : req.before;
  const older = await readBrokerTail(source.tail, req.wanted, req.limit - page.size, boundary);
  for (let i = older.length - 1; i >= 0 && !page.full; i--) page.add(older[i]!);
  return page.result();
}

function fromRing(source: HistorySource, req: HistoryRequest, page: PageBuilder): void {
  const { ring } = source;
  const first = ring.end - ring.size;
  for (let seq = ring.end - 1; seq >= first && !page.full; seq--) {
    const e = ring.get(seq)!;
    if (req.before !== undefined && source.compare(e.position, req.before) >= 0) continue;
    if (req.wanted(e)) page.add(e);
  }
}

function olderOf(source: HistorySource, a: Position, b: Position | undefined): Position {
  return b === undefined || source.compare(a, b) < 0 ? a : b;
}

class PageBuilder {
  private readonly events: RingEvent[] = [];
  private bytes = 0;
  private cut = false;
  private readonly req: HistoryRequest;

  constructor(req: HistoryRequest) {
    this.req = req;
  }

  get size(): number {
    return this.events.length;
  }

  get full(): boolean {
    return this.cut || this.events.length >= this.req.limit;
  }

  add(e: RingEvent): void {
    // UTF-8, as the page is written: an event's characters may be up to three bytes each.
    const bytes = Buffer.byteLength(e.json) + e.position.length + 32;
    if (this.events.length > 0 && this.bytes + bytes > this.req.maxBytes) {
      this.cut = true;
      return;
    }
    this.bytes += bytes;
    this.events.push(e);
  }

  result(): HistoryPage {
    const last = this.events.at(-1);
    return { events: this.events, next: this.full && last ? last.position : undefined };
  }
}
