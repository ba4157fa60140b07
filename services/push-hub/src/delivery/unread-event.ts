/**
 * A fan-out event the replica keeps without reading it: its record's headers named its type, source
 * and id (stream-headers in @gatehouse/cloudevents), and no connection here wanted the type when it
 * came (or it came in the ring's warm-up, when nobody gets events). The ring holds it for the
 * resumes that may reach it; the body stays the record's bytes until one does, and is read then,
 * once (readStreamEvent, as a dispatched event is read).
 *
 * The headers are a claim: an event whose body turns out unreadable, in the gateway's own namespace
 * or not the type, source and id its headers named is nobody's (`event` without a type, which no
 * subscription matches), as a dispatched one the hub cannot read is dropped.
 */
import type { StreamEventHeaders } from '@gatehouse/cloudevents';
import type { RingEvent } from './event-ring.ts';
import { readStreamEvent } from './stream-event.ts';

/** What an unread event is once its body turns out not to be the event its headers named. */
const nobodys: Record<string, unknown> = Object.freeze({});

export class UnreadEvent implements RingEvent {
  readonly position: string;
  /** The type its headers named. */
  readonly type: string;
  /** Its source and id as its headers named them (the ring's duplicate check). */
  readonly source: string;
  readonly id: string;
  /** The record's body (a view of the bus's buffer, not a copy) until it is read. */
  private body: Buffer | undefined;
  private text: string | undefined;
  private parsed: Record<string, unknown> | undefined;

  constructor(position: string, body: Buffer, headers: StreamEventHeaders) {
    this.position = position;
    this.type = headers.type;
    this.source = headers.source;
    this.id = headers.id;
    this.body = body;
    this.textLength = body.length;
  }

  /** Bytes of its body: at least the length of its JSON text, and the same once that is read. */
  readonly textLength: number;

  /** Whether its body was read. */
  get read(): boolean {
    return this.parsed !== undefined;
  }

  get event(): Record<string, unknown> {
    if (this.parsed === undefined) this.readBody();
    return this.parsed!;
  }

  get json(): string {
    if (this.parsed === undefined) this.readBody();
    return this.text!;
  }

  private readBody(): void {
    const text = this.body!.toString('utf8');
    this.body = undefined;
    const e = readStreamEvent(this.position, text);
    if (
      typeof e === 'string' ||
      e.type !== this.type ||
      e.event['source'] !== this.source ||
      e.event['id'] !== this.id
    ) {
      this.text = text;
      this.parsed = nobodys;
      return;
    }
    this.text = e.json;
    this.parsed = e.event;
  }
}
