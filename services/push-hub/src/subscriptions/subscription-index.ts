/**
 * Which local connections want an event. Subscriptions are indexed by event type (exact match), and
 * each subscription's constraints are compiled against the type's extractor fields, so matching an
 * event extracts each field once and compares canonical JSON text per constraint.
 */
import type { ExtractorConfig, ExtractorField } from './extractor-config.ts';
import { canonicalJson, InvalidSubscriptionError, type Subscription } from './subscription.ts';

/** One AND-clause: pairs of (field position in the type's field list, canonical value). */
type Clause = Array<[number, string]>;
/** OR of clauses; an empty list matches every event of the type. */
type CompiledSubscription = Clause[];

/**
 * What most connections hold for a type: one subscription without constraints. It is shared rather
 * than made per connection (two arrays each); set() copies it before adding to it.
 */
const EVERY_EVENT: readonly CompiledSubscription[] = Object.freeze([Object.freeze<Clause[]>([]) as Clause[]]);

/** Told of the types an index holds (the fan-out stream's interest routing, fanout-interest.ts). */
export interface TypeInterest {
  /** A type has its first subscriber in the index. */
  up(type: string): void;
  /** A type has lost its last subscriber in the index. */
  down(type: string): void;
}

export class SubscriptionIndex<C> {
  private readonly byType = new Map<string, Map<C, readonly CompiledSubscription[]>>();
  /** The types a subscriber is indexed under: one type as is, several as a list (no list per connection). */
  private readonly bySubscriber = new Map<C, string | string[]>();
  private readonly extractors: ExtractorConfig;
  private readonly interest: TypeInterest | undefined;
  private count = 0;

  constructor(extractors: ExtractorConfig, interest?: TypeInterest) {
    this.extractors = extractors;
    this.interest = interest;
  }

  /** Throws InvalidSubscriptionError for a constraint on a field the extractor config lacks. */
  validate(subs: Subscription[]): void {
    for (const s of subs) this.compile(s);
  }

  /** Replaces all subscriptions of `subscriber`. */
  set(subscriber: C, subs: Subscription[]): void {
    const compiled = subs.map((s) => [s.eventType, this.compile(s)] as const);
    this.remove(subscriber);
    const types: string[] = [];
    for (const [type, sub] of compiled) {
      let entries = this.byType.get(type);
      if (!entries) {
        entries = new Map();
        this.byType.set(type, entries);
        this.interest?.up(type);
      }
      const list = entries.get(subscriber);
      if (list) entries.set(subscriber, [...list, sub]);
      else {
        entries.set(subscriber, sub.length === 0 ? EVERY_EVENT : [sub]);
        types.push(type);
      }
    }
    this.bySubscriber.set(subscriber, types.length === 1 ? types[0]! : types);
    this.count += compiled.length;
  }

  remove(subscriber: C): void {
    const indexed = this.bySubscriber.get(subscriber);
    if (indexed === undefined) return;
    for (const type of typeof indexed === 'string' ? [indexed] : indexed) {
      const entries = this.byType.get(type);
      this.count -= entries?.get(subscriber)?.length ?? 0;
      entries?.delete(subscriber);
      if (entries?.size === 0) {
        this.byType.delete(type);
        this.interest?.down(type);
      }
    }
    this.bySubscriber.delete(subscriber);
  }

  /** Number of subscriptions held (for the subscriptions gauge). */
  get size(): number {
    return this.count;
  }

  /** Whether any subscriber subscribes to events of `type` (whatever its constraints). */
  has(type: string): boolean {
    return this.byType.has(type);
  }

  /** The types `subscriber` subscribes to. */
  typesOf(subscriber: C): readonly string[] {
    const indexed = this.bySubscriber.get(subscriber);
    return indexed === undefined ? [] : typeof indexed === 'string' ? [indexed] : indexed;
  }

  /** Whether `subscriber` subscribes to events of `type` (whatever its constraints). */
  subscribes(subscriber: C, type: string): boolean {
    return this.byType.get(type)?.has(subscriber) === true;
  }

  /** The subscribers to events of `type`, whatever their constraints. */
  subscribersOf(type: string): Iterable<C> {
    return this.byType.get(type)?.keys() ?? [];
  }

  /** Calls `deliver` once for every subscriber with at least one matching subscription. */
  match(event: { type: string }, deliver: (subscriber: C) => void): void {
    const entries = this.byType.get(event.type);
    if (!entries) return;
    const fields = new EventFields(event, this.extractors.get(event.type) ?? []);
    for (const [subscriber, subs] of entries) if (anyMatches(subs, fields)) deliver(subscriber);
  }

  /** Whether one subscriber wants the event (replaying buffered events to one connection). */
  matches(subscriber: C, event: { type: string }): boolean {
    const subs = this.byType.get(event.type)?.get(subscriber);
    return (
      subs !== undefined && anyMatches(subs, new EventFields(event, this.extractors.get(event.type) ?? []))
    );
  }

  /** A standalone matcher for subscriptions not held in the index (long-poll connections). */
  matcherFor(subs: Subscription[]): (event: { type: string }) => boolean {
    const byType = new Map<string, CompiledSubscription[]>();
    for (const s of subs) byType.set(s.eventType, [...(byType.get(s.eventType) ?? []), this.compile(s)]);
    return (event) => {
      const compiled = byType.get(event.type);
      return (
        compiled !== undefined &&
        anyMatches(compiled, new EventFields(event, this.extractors.get(event.type) ?? []))
      );
    };
  }

  private compile(sub: Subscription): CompiledSubscription {
    const fields = this.extractors.get(sub.eventType) ?? [];
    return sub.oneOf.map((constraint) =>
      Object.entries(constraint).map(([name, value]): [number, string] => {
        const i = fields.findIndex((f) => f.name === name);
        if (i < 0) {
          throw new InvalidSubscriptionError(
            `field "${name}" is not defined for event type "${sub.eventType}" in the extractor configuration`,
          );
        }
        const canonical = canonicalJson(value);
        if (canonical === undefined) {
          throw new InvalidSubscriptionError(
            `field "${name}" of event type "${sub.eventType}" is constrained to a value nested too deeply to compare`,
          );
        }
        return [i, canonical];
      }),
    );
  }
}

/**
 * The event's extractor field values as canonical JSON, read once and only when a constraint needs
 * them. A value too deep to compare (see canonicalJson) is absent: it matches no constraint.
 */
class EventFields {
  private values: Array<string | undefined> | undefined;
  private readonly event: unknown;
  private readonly fields: ExtractorField[];

  constructor(event: unknown, fields: ExtractorField[]) {
    this.event = event;
    this.fields = fields;
  }

  get(i: number): string | undefined {
    this.values ??= this.fields.map((f) => {
      const v = f.readEvent(this.event);
      return v === undefined ? undefined : canonicalJson(v);
    });
    return this.values[i];
  }
}

function anyMatches(subs: readonly CompiledSubscription[], fields: EventFields): boolean {
  return subs.some(
    (sub) => sub.length === 0 || sub.some((clause) => clause.every(([i, v]) => fields.get(i) === v)),
  );
}
