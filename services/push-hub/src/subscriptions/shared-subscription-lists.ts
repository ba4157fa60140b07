/**
 * Manual subscription lists by the text a client sent, kept once they passed every check that does
 * not depend on who sent them, and shared by every connection that sends the same text. A reconnect
 * storm's clients mostly send a handful of texts: a hit spares the parse, the duplicate and bound
 * checks and the extractor validation (about a tenth of a connect's CPU), and every connection of a
 * text holds one frozen list instead of its own array, subscription object and `oneOf` array.
 *
 * Bounded by SHARED_SUBSCRIPTION_LISTS entries (the oldest leaves first) of at most
 * SHARED_SUBSCRIPTION_LIST_BYTES of text each, and never MAX_HASHED_CHARS or more; a longer text,
 * and one naming a type pattern (its validation spends the sender's share of MAX_TYPE_PATTERNS), is
 * checked on every connect as before.
 */
import type { Subscription } from './subscription.ts';

/**
 * V8 hashes a string of 16,384 characters or more by its length alone: kept texts of one such length
 * all collide in the map, and a look-up compares the text with each of them (a client filling the
 * map with texts of one length, padded with spaces, made each of its connects cost milliseconds).
 */
export const MAX_HASHED_CHARS = 16_383;

export interface SharedListBounds {
  /** SHARED_SUBSCRIPTION_LISTS: texts kept at once (0: none). */
  maxLists: number;
  /** SHARED_SUBSCRIPTION_LIST_BYTES: the longest text kept, in UTF-8 bytes (MAX_HASHED_CHARS at most). */
  maxTextBytes: number;
}

export class SharedSubscriptionLists {
  private readonly lists = new Map<string, readonly Subscription[]>();
  private readonly bounds: SharedListBounds;

  constructor(bounds: SharedListBounds) {
    this.bounds = bounds;
  }

  /** The list kept for this text, checked already; undefined for a text not kept. */
  get(text: unknown): Subscription[] | undefined {
    return typeof text === 'string' ? (this.lists.get(text) as Subscription[] | undefined) : undefined;
  }

  /**
   * Keeps `list`, which `text` parsed to and which passed the checks, and answers the list to hold
   * (frozen, so that no holder can change another's). A text that may not be kept answers `list`.
   */
  keep(text: unknown, list: Subscription[]): Subscription[] {
    if (typeof text !== 'string' || !this.fits(text)) return list;
    if (this.lists.size >= this.bounds.maxLists) this.lists.delete(this.lists.keys().next().value!);
    const shared = deepFreeze(list);
    this.lists.set(text, shared);
    return shared;
  }

  get size(): number {
    return this.lists.size;
  }

  private fits(text: string): boolean {
    const max = Math.min(this.bounds.maxTextBytes, MAX_HASHED_CHARS);
    return this.bounds.maxLists > 0 && text.length <= max && Buffer.byteLength(text) <= max;
  }
}

/** The list, its subscriptions and their constraints frozen (parsed JSON: no cycles, depth bounded). */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
