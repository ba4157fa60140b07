/** In-process Store for the embedded runner and unit tests; expiry is exact to the millisecond. */
import type { ChangeListener, ChangeKind, SetOptions, Store } from './store.ts';
import { StoreError, StoreUnavailableError } from './store.ts';

interface Entry {
  value: string;
  expiresAt: number;
  timer: NodeJS.Timeout | undefined;
}

export class MemoryStore implements Store {
  readonly kind = 'memory';
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<{ prefix: string; listener: ChangeListener }>();
  private closed = false;

  async get(key: string): Promise<string | undefined> {
    this.assertOpen();
    return this.live(key)?.value;
  }

  async set(key: string, value: string, options: SetOptions = {}): Promise<boolean> {
    this.assertOpen();
    if (options.ifAbsent && this.live(key)) return false;
    this.put(key, value, options.ttlSeconds);
    this.emit(key, 'set');
    return true;
  }

  async compareAndSet(
    key: string,
    expected: string | undefined,
    value: string,
    options: { ttlSeconds?: number } = {},
  ): Promise<boolean> {
    this.assertOpen();
    if (this.live(key)?.value !== expected) return false;
    this.put(key, value, options.ttlSeconds);
    this.emit(key, 'set');
    return true;
  }

  async delete(key: string): Promise<boolean> {
    this.assertOpen();
    const existed = this.live(key) !== undefined;
    this.remove(key);
    if (existed) this.emit(key, 'delete');
    return existed;
  }

  async exists(key: string): Promise<boolean> {
    this.assertOpen();
    return this.live(key) !== undefined;
  }

  async ttl(key: string): Promise<number | undefined> {
    this.assertOpen();
    const e = this.live(key);
    if (!e) return undefined;
    return e.expiresAt === Infinity ? Infinity : (e.expiresAt - Date.now()) / 1000;
  }

  async increment(key: string, options: { by?: number; ttlSeconds?: number } = {}): Promise<number> {
    this.assertOpen();
    const e = this.live(key);
    // Same rule as Redis INCRBY: only a plain decimal integer counts ('' or '1.5' do not).
    if (e && !/^-?\d+$/.test(e.value)) throw new StoreError(`value of ${key} is not an integer`);
    const next = (e ? Number(e.value) : 0) + (options.by ?? 1);
    if (e) e.value = String(next);
    else this.put(key, String(next), options.ttlSeconds);
    return next;
  }

  async append(
    key: string,
    value: string,
    options: { ttlSeconds?: number; maxLength?: number } = {},
  ): Promise<number> {
    this.assertOpen();
    const e = this.live(key);
    const list: string[] = e ? JSON.parse(e.value) : [];
    list.push(value);
    if (options.maxLength !== undefined && list.length > options.maxLength)
      list.splice(0, list.length - options.maxLength);
    this.put(key, JSON.stringify(list), options.ttlSeconds ?? (e ? remainingSeconds(e) : undefined));
    this.emit(key, 'set');
    return list.length;
  }

  async takeAll(key: string): Promise<string[]> {
    this.assertOpen();
    const e = this.live(key);
    if (!e) return [];
    this.remove(key);
    this.emit(key, 'delete');
    return JSON.parse(e.value);
  }

  async list(key: string): Promise<string[]> {
    this.assertOpen();
    const e = this.live(key);
    return e ? JSON.parse(e.value) : [];
  }

  async removeItems(key: string, items: string[]): Promise<number> {
    this.assertOpen();
    const e = this.live(key);
    if (!e) return 0;
    const list: string[] = JSON.parse(e.value);
    let removed = 0;
    for (const item of items) {
      const i = list.indexOf(item);
      if (i < 0) continue;
      list.splice(i, 1);
      removed++;
    }
    if (removed === 0) return 0;
    if (list.length === 0) {
      this.remove(key);
      this.emit(key, 'delete');
    } else {
      e.value = JSON.stringify(list);
      this.emit(key, 'set');
    }
    return removed;
  }

  async touch(key: string, ttlSeconds: number): Promise<boolean> {
    this.assertOpen();
    const e = this.live(key);
    if (!e) return false;
    this.put(key, e.value, ttlSeconds);
    return true;
  }

  async keys(prefix: string): Promise<string[]> {
    this.assertOpen();
    return [...this.entries.keys()].filter((k) => k.startsWith(prefix) && this.live(k));
  }

  async watch(prefix: string, listener: ChangeListener): Promise<() => Promise<void>> {
    this.assertOpen();
    const entry = { prefix, listener };
    this.listeners.add(entry);
    return async () => void this.listeners.delete(entry);
  }

  async ping(): Promise<void> {
    this.assertOpen();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const e of this.entries.values()) clearTimeout(e.timer);
    this.entries.clear();
    this.listeners.clear();
  }

  private live(key: string): Entry | undefined {
    const e = this.entries.get(key);
    if (e && e.expiresAt <= Date.now()) {
      this.remove(key);
      this.emit(key, 'expire');
      return undefined;
    }
    return e;
  }

  private put(key: string, value: string, ttlSeconds: number | undefined): void {
    this.remove(key);
    const expiresAt = ttlSeconds === undefined ? Infinity : Date.now() + ttlSeconds * 1000;
    // The timer makes expiry observable (watch) even when nobody reads the key again.
    const timer =
      ttlSeconds === undefined ? undefined : setTimeout(() => this.live(key), ttlSeconds * 1000 + 1);
    timer?.unref();
    this.entries.set(key, { value, expiresAt, timer });
  }

  private remove(key: string): void {
    const e = this.entries.get(key);
    if (e) clearTimeout(e.timer);
    this.entries.delete(key);
  }

  private emit(key: string, kind: ChangeKind): void {
    for (const { prefix, listener } of this.listeners) if (key.startsWith(prefix)) listener({ key, kind });
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreUnavailableError('memory store is closed');
  }
}

function remainingSeconds(e: Entry): number | undefined {
  return e.expiresAt === Infinity ? undefined : Math.max(0, (e.expiresAt - Date.now()) / 1000);
}
