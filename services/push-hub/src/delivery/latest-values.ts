/**
 * The newest event of each type of LATEST_EVENT_TYPES and, where the extractor configuration names
 * fields for the type, of each value of each field (a room, an order id), kept in the store (Redis
 * in a deployment): shared by the replicas and kept across restarts of any service, so a client
 * subscribing with `latest=true` gets the current state at once (Centrifugo's cache recovery,
 * Ably's rewind=1) instead of asking a backend for it.
 *
 * Every replica reads the whole stream and writes what it reads: the same value, idempotently, in
 * stream order. A replica behind the others may write an older value for a moment; it writes the
 * newer one when it reads it, so a key ends at the stream's newest event. Bounded: only the
 * configured types, events up to LATEST_MAX_EVENT_BYTES, at most LATEST_MAX_KEYS live keys a
 * replica wrote (new keys beyond are not kept, and counted), each expiring LATEST_TTL after its
 * last write.
 */
import { createHash } from 'node:crypto';
import type { Store } from '@gatehouse/store';
import type { RingEvent } from './event-ring.ts';
import { canonicalJson, type ExtractorConfig, type Subscription } from '../subscriptions/index.ts';

export interface LatestSettings {
  /** LATEST_EVENT_TYPES. */
  types: ReadonlySet<string>;
  /** LATEST_MAX_EVENT_BYTES: a larger event is not kept (its key keeps the previous one). */
  maxEventBytes: number;
  /** LATEST_MAX_KEYS: distinct keys one replica writes at most. */
  maxKeys: number;
  /** LATEST_TTL, seconds. */
  ttlSeconds: number;
}

/** A kept event: its stream position, type and CloudEvent JSON text. */
export interface LatestValue {
  position: string;
  type: string;
  json: string;
}

export interface LatestDeps {
  store: Store;
  extractors: ExtractorConfig;
  compare(a: string, b: string): number;
  /** A write the store refused or could not take. */
  onError(err: unknown): void;
  /** A new key beyond LATEST_MAX_KEYS was not kept. */
  overflowed(): void;
}

const prefix = 'gw:latest:';

export class LatestValues {
  private readonly settings: LatestSettings;
  private readonly deps: LatestDeps;
  /**
   * Keys this replica wrote and the store still holds, for LATEST_MAX_KEYS (the bound is per
   * replica): each with the time of its last write, oldest write first. A key whose LATEST_TTL has
   * passed since is gone from the store and no longer counts: else ids a publisher invented once
   * would take the bound's place for good, and no new key (a real order) would ever be kept again.
   */
  private readonly written = new Map<string, number>();

  constructor(settings: LatestSettings, deps: LatestDeps) {
    this.settings = settings;
    this.deps = deps;
  }

  /** Orders two stream positions (the fan-out bus's). */
  compare(a: string, b: string): number {
    return this.deps.compare(a, b);
  }

  /** Whether events of `type` are kept (it must be read when it comes). */
  keeps(type: string): boolean {
    return this.settings.types.has(type);
  }

  /** A live event of the stream: kept as its type's newest, and its fields' values'. */
  keep(e: RingEvent): void {
    if (!this.keeps(e.type) || Buffer.byteLength(e.json) > this.settings.maxEventBytes) return;
    const value = JSON.stringify({ position: e.position, type: e.type, json: e.json } satisfies LatestValue);
    const now = Date.now();
    for (const key of this.keysOf(e)) {
      if (!this.written.delete(key) && this.written.size >= this.settings.maxKeys) {
        this.forgetExpired(now);
        if (this.written.size >= this.settings.maxKeys) {
          this.deps.overflowed();
          continue;
        }
      }
      // Deleted and set again: the map stays in the order of last writes.
      this.written.set(key, now);
      this.deps.store.set(key, value, { ttlSeconds: this.settings.ttlSeconds }).catch(this.deps.onError);
    }
  }

  /**
   * The newest kept events `subscriptions` want, oldest first, each once: per subscription to a
   * kept type, its type's newest without constraints, else per constraint object the newest of its
   * first field's value that `matches` as a whole.
   */
  async of(
    subscriptions: readonly Subscription[],
    matches: (e: RingEvent) => boolean,
  ): Promise<LatestValue[]> {
    const keys = new Set<string>();
    for (const s of subscriptions) {
      if (!this.keeps(s.eventType)) continue;
      if (s.oneOf.length === 0) keys.add(typeKey(s.eventType));
      for (const constraint of s.oneOf) {
        const [field, value] = Object.entries(constraint)[0] ?? [];
        if (field !== undefined) keys.add(fieldKey(s.eventType, field, canonicalJson(value) ?? ''));
      }
    }
    const texts = await Promise.all([...keys].map((k) => this.deps.store.get(k)));
    const byPosition = new Map<string, LatestValue>();
    for (const text of texts) {
      const value = text === undefined ? undefined : readValue(text);
      if (value && !byPosition.has(value.position) && matches(asRingEvent(value)))
        byPosition.set(value.position, value);
    }
    return [...byPosition.values()].sort((a, b) => this.deps.compare(a.position, b.position));
  }

  /** Forgets the keys whose TTL has passed since their last write (the oldest writes come first). */
  private forgetExpired(now: number): void {
    const ttlMs = this.settings.ttlSeconds * 1000;
    for (const [key, writtenAt] of this.written) {
      if (now - writtenAt < ttlMs) return;
      this.written.delete(key);
    }
  }

  private keysOf(e: RingEvent): string[] {
    const keys = [typeKey(e.type)];
    for (const field of this.deps.extractors.get(e.type) ?? []) {
      const value = field.readEvent(e.event);
      const text = value === undefined ? undefined : canonicalJson(value);
      if (text !== undefined) keys.push(fieldKey(e.type, field.name, text));
    }
    return keys;
  }
}

/** Keys are hashes: a type or a field's value of any length makes a key of one size. */
function typeKey(type: string): string {
  return `${prefix}${digest(`t\u0000${type}`)}`;
}

function fieldKey(type: string, field: string, canonicalValue: string): string {
  return `${prefix}${digest(`f\u0000${type}\u0000${field}\u0000${canonicalValue}`)}`;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

/** A stored value, or undefined for text this code did not write (the store is shared). */
function readValue(text: string): LatestValue | undefined {
  try {
    const v = JSON.parse(text) as Partial<LatestValue>;
    if (typeof v.position === 'string' && typeof v.type === 'string' && typeof v.json === 'string')
      return { position: v.position, type: v.type, json: v.json };
  } catch {}
  return undefined;
}

function asRingEvent(v: LatestValue): RingEvent {
  let event: Record<string, unknown> | undefined;
  return {
    position: v.position,
    type: v.type,
    json: v.json,
    get event() {
      event ??= JSON.parse(v.json) as Record<string, unknown>;
      return event;
    },
  };
}
