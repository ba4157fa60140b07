/**
 * Which local connections want an event. Subscriptions are indexed by event type (exact match), and
 * type patterns (`com.example.orders.*`, `com.example.orders.>`, type-pattern.ts in
 * @gatehouse/cloudevents) by segment in a trie, so an event costs a map lookup plus the patterns
 * that could match it, never the others. Each subscription's constraints are compiled against the
 * extractor fields of what it names (a type, or a pattern: the extractor configuration may name
 * patterns too), so matching an event extracts each field once and compares canonical JSON text
 * per constraint.
 */
import { isTypePattern, typePatternProblem } from '@gatehouse/cloudevents';
import type { ExtractorConfig, ExtractorField } from './extractor-config.ts';
import type { PatternBudget } from './pattern-budget.ts';
import { canonicalJson, InvalidSubscriptionError, type Subscription } from './subscription.ts';
import { isGatewayType, patternMatches } from './type-filter.ts';
import { TypeTrie } from './type-trie.ts';

/** One AND-clause: pairs of (field position in the type's field list, canonical value). */
type Clause = Array<[number, string]>;
/** OR of clauses; an empty list matches every event of the type. */
type CompiledSubscription = Clause[];

/**
 * What most connections hold for a type: one subscription without constraints. It is shared rather
 * than made per connection (two arrays each); set() copies it before adding to it.
 */
const EVERY_EVENT: readonly CompiledSubscription[] = Object.freeze([Object.freeze<Clause[]>([]) as Clause[]]);

type Entries<C> = Map<C, readonly CompiledSubscription[]>;

/** The subscribers of one pattern, and the extractor fields its constraints were compiled against. */
interface PatternGroup<C> {
  fields: ExtractorField[];
  entries: Entries<C>;
}

/** The pattern groups of a type when no pattern is held (of any subscriber type: it is empty). */
const NO_GROUPS: readonly PatternGroup<never>[] = Object.freeze([]);

/** MAX_PATTERN_SEGMENTS, and the replica's MAX_TYPE_PATTERNS shared by its indexes. */
export interface PatternLimits {
  maxSegments: number;
  budget?: PatternBudget | undefined;
}

const defaultPatternLimits: PatternLimits = { maxSegments: 16 };

/** Told of the types an index holds (the fan-out stream's interest routing, fanout-interest.ts). */
export interface TypeInterest {
  /** A type (or a type pattern) has its first subscriber in the index. */
  up(type: string): void;
  /** A type has lost its last subscriber in the index. */
  down(type: string): void;
}

export class SubscriptionIndex<C> {
  private readonly byType = new Map<string, Entries<C>>();
  private readonly patterns = new TypeTrie<PatternGroup<C>>();
  /** The types a subscriber is indexed under: one type as is, several as a list (no list per connection). */
  private readonly bySubscriber = new Map<C, string | string[]>();
  /** The client address of a subscriber that holds patterns, for MAX_TYPE_PATTERNS_PER_ADDRESS. */
  private readonly addressOf = new Map<C, string>();
  private readonly extractors: ExtractorConfig;
  private readonly interest: TypeInterest | undefined;
  /** Its pattern bounds, for an index beside it to share (long polls). */
  readonly limits: PatternLimits;
  private count = 0;

  constructor(extractors: ExtractorConfig, interest?: TypeInterest, limits = defaultPatternLimits) {
    this.extractors = extractors;
    this.interest = interest;
    this.limits = limits;
  }

  /**
   * Throws InvalidSubscriptionError for a constraint on a field the extractor config lacks or a
   * malformed pattern. For a place a query names (history, presence): it holds no pattern, so the
   * pattern budget has no say.
   */
  check(subs: Subscription[]): void {
    for (const s of subs) this.compile(s);
  }

  /**
   * What check refuses, and the 503 of MAX_TYPE_PATTERNS (the 429 of MAX_TYPE_PATTERNS_PER_ADDRESS
   * for the client at `address`) when its new patterns would not fit.
   */
  validate(subs: Subscription[], address?: string): void {
    this.check(subs);
    const patterns = subs.filter((s) => isTypePattern(s.eventType)).map((s) => s.eventType);
    if (patterns.length > 0) this.limits.budget?.admit(patterns, address);
  }

  /** Replaces all subscriptions of `subscriber`, whose patterns count for its client `address`. */
  set(subscriber: C, subs: Subscription[], address?: string): void {
    const compiled = subs.map((s) => [s.eventType, this.compile(s)] as const);
    this.remove(subscriber);
    const types: string[] = [];
    for (const [type, sub] of compiled) {
      const entries = this.entriesOf(type) ?? this.addType(type);
      const list = entries.get(subscriber);
      if (list) entries.set(subscriber, [...list, sub]);
      else {
        entries.set(subscriber, sub.length === 0 ? EVERY_EVENT : [sub]);
        types.push(type);
      }
    }
    this.bySubscriber.set(subscriber, types.length === 1 ? types[0]! : types);
    this.count += compiled.length;
    const patterns = types.filter(isTypePattern);
    if (address !== undefined && patterns.length > 0 && this.limits.budget) {
      this.limits.budget.holdFor(address, patterns);
      this.addressOf.set(subscriber, address);
    }
  }

  remove(subscriber: C): void {
    const indexed = this.bySubscriber.get(subscriber);
    if (indexed === undefined) return;
    const address = this.addressOf.get(subscriber);
    if (address !== undefined) {
      this.limits.budget?.releaseFor(address, this.patternsOf(subscriber));
      this.addressOf.delete(subscriber);
    }
    for (const type of typeof indexed === 'string' ? [indexed] : indexed) {
      const entries = this.entriesOf(type);
      this.count -= entries?.get(subscriber)?.length ?? 0;
      entries?.delete(subscriber);
      if (entries?.size === 0) this.dropType(type);
    }
    this.bySubscriber.delete(subscriber);
  }

  /** Type patterns held (distinct). */
  get patternCount(): number {
    return this.patterns.size;
  }

  private entriesOf(type: string): Entries<C> | undefined {
    return isTypePattern(type) ? this.patterns.get(type)?.entries : this.byType.get(type);
  }

  private addType(type: string): Entries<C> {
    const entries: Entries<C> = new Map();
    if (isTypePattern(type)) {
      this.patterns.set(type, { fields: this.extractors.get(type) ?? [], entries });
      this.limits.budget?.add(type);
    } else this.byType.set(type, entries);
    this.interest?.up(type);
    return entries;
  }

  private dropType(type: string): void {
    if (isTypePattern(type)) {
      this.patterns.delete(type);
      this.limits.budget?.release(type);
    } else this.byType.delete(type);
    this.interest?.down(type);
  }

  /** Number of subscriptions held (for the subscriptions gauge). */
  get size(): number {
    return this.count;
  }

  /** Whether any subscriber subscribes to events of `type` (whatever its constraints). */
  has(type: string): boolean {
    if (this.byType.has(type)) return true;
    // Asked for every event off the stream: with no pattern held, no closure and no walk.
    if (this.patterns.size === 0 || isGatewayType(type)) return false;
    let found = false;
    this.patterns.match(type, () => (found = true));
    return found;
  }

  /** The types `subscriber` subscribes to. */
  typesOf(subscriber: C): readonly string[] {
    const indexed = this.bySubscriber.get(subscriber);
    return indexed === undefined ? [] : typeof indexed === 'string' ? [indexed] : indexed;
  }

  /** Whether `subscriber` subscribes to events of `type` (whatever its constraints). */
  subscribes(subscriber: C, type: string): boolean {
    if (this.byType.get(type)?.has(subscriber) === true) return true;
    const patterns = this.patternsOf(subscriber);
    return patterns.length > 0 && patternMatches(patterns, type);
  }

  /** The subscribers to events of `type`, whatever their constraints. */
  subscribersOf(type: string): Iterable<C> {
    const groups = this.patternGroupsOf(type);
    const exact = this.byType.get(type)?.keys() ?? [];
    if (groups.length === 0) return exact;
    const all = new Set<C>(exact);
    for (const g of groups) for (const subscriber of g.entries.keys()) all.add(subscriber);
    return all;
  }

  /** Calls `deliver` once for every subscriber with at least one matching subscription. */
  match(event: { type: string }, deliver: (subscriber: C) => void): void {
    const entries = this.byType.get(event.type);
    const groups = this.patternGroupsOf(event.type);
    if (groups.length === 0) {
      if (entries) this.matchEntries(entries, event, this.fieldsOf(event.type), deliver);
      return;
    }
    if (!entries && groups.length === 1) {
      this.matchEntries(groups[0]!.entries, event, groups[0]!.fields, deliver);
      return;
    }
    // A subscriber may be in more than one of them: once each.
    const delivered = new Set<C>();
    const once = (subscriber: C) => {
      if (delivered.has(subscriber)) return;
      delivered.add(subscriber);
      deliver(subscriber);
    };
    if (entries) this.matchEntries(entries, event, this.fieldsOf(event.type), once);
    for (const g of groups) this.matchEntries(g.entries, event, g.fields, once);
  }

  /** Whether one subscriber wants the event (replaying buffered events to one connection). */
  matches(subscriber: C, event: { type: string }): boolean {
    const subs = this.byType.get(event.type)?.get(subscriber);
    if (subs !== undefined && anyMatches(subs, new EventFields(event, this.fieldsOf(event.type))))
      return true;
    for (const pattern of this.patternsOf(subscriber)) {
      if (!patternMatches([pattern], event.type)) continue;
      const group = this.patterns.get(pattern)!;
      const own = group.entries.get(subscriber);
      if (own !== undefined && anyMatches(own, new EventFields(event, group.fields))) return true;
    }
    return false;
  }

  /** A standalone matcher for subscriptions not held in the index (long-poll connections). */
  matcherFor(subs: Subscription[]): (event: { type: string }) => boolean {
    const byType = new Map<string, CompiledSubscription[]>();
    for (const s of subs) byType.set(s.eventType, [...(byType.get(s.eventType) ?? []), this.compile(s)]);
    const patterns = [...byType.keys()].filter(isTypePattern);
    return (event) => {
      const compiled = byType.get(event.type);
      if (compiled !== undefined && anyMatches(compiled, new EventFields(event, this.fieldsOf(event.type))))
        return true;
      for (const pattern of patterns)
        if (
          patternMatches([pattern], event.type) &&
          anyMatches(byType.get(pattern)!, new EventFields(event, this.fieldsOf(pattern)))
        )
          return true;
      return false;
    };
  }

  private matchEntries(
    entries: Entries<C>,
    event: { type: string },
    fields: ExtractorField[],
    deliver: (subscriber: C) => void,
  ): void {
    const values = new EventFields(event, fields);
    for (const [subscriber, subs] of entries) if (anyMatches(subs, values)) deliver(subscriber);
  }

  /** The pattern groups that match `type`: none for the gateway's own types. */
  private patternGroupsOf(type: string): readonly PatternGroup<C>[] {
    // Every delivered event asks: with no pattern held, no array made for it.
    if (this.patterns.size === 0 || isGatewayType(type)) return NO_GROUPS;
    const groups: PatternGroup<C>[] = [];
    this.patterns.match(type, (g) => groups.push(g));
    return groups;
  }

  private patternsOf(subscriber: C): string[] {
    if (this.patterns.size === 0) return [];
    return this.typesOf(subscriber).filter(isTypePattern);
  }

  private fieldsOf(typeOrPattern: string): ExtractorField[] {
    return this.extractors.get(typeOrPattern) ?? [];
  }

  private compile(sub: Subscription): CompiledSubscription {
    if (isTypePattern(sub.eventType)) this.checkPattern(sub.eventType);
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

  private checkPattern(pattern: string): void {
    const problem = typePatternProblem(pattern, this.limits.maxSegments);
    if (problem) throw new InvalidSubscriptionError(problem);
    if (isGatewayType(pattern))
      throw new InvalidSubscriptionError(
        `pattern "${pattern.slice(0, 80)}": the gateway's own gw.… events are subscribed to by name, not by pattern`,
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
