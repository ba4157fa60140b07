/**
 * Remembers the `source` and `id` of the last events delivered, so a copy that arrives again (a
 * publisher's redelivery, a resume that overlaps what a previous connection already gave) is
 * dropped. Bounded: the oldest keys are forgotten first.
 */
export class Dedupe {
  private readonly size: number;
  private readonly seen = new Set<string>();

  constructor(size = 1000) {
    this.size = size;
  }

  /** True the first time an event's key (its source and id) comes, false for a copy. */
  first(key: string): boolean {
    if (this.seen.has(key)) return false;
    this.seen.add(key);
    // A Set iterates in insertion order: its first key is the oldest.
    if (this.seen.size > this.size) this.seen.delete(this.seen.values().next().value as string);
    return true;
  }
}
