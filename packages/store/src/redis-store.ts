/**
 * Store on Redis. Keys live under an optional namespace; expiry is Redis's own (SET PX), so every
 * replica sees the same lifetimes. Writes that announce themselves run as Lua scripts, so a change
 * and its announcement happen together or not at all.
 *
 * Change notifications travel two ways (redis-change-feed.ts):
 * - sets and deletes are published explicitly on the channel `gatehouse:store:changes@<db>`;
 * - expiries come from Redis keyspace notifications on `__keyevent@<db>__:expired`. They need
 *   `notify-keyspace-events` to contain `E` and `x` (or `A`). The server's configuration must have
 *   them; the store adds them with CONFIG SET only when `setKeyspaceEvents` allows it. Once it
 *   watches, ping() (readiness) fails while a node lacks them, saying what to set.
 * Increments are not announced: they are counters (rate limits), not shared state.
 *
 * Redis Cluster (`cluster: true`): every script and command touches exactly one key, so each runs
 * on the node of that key's slot and no key needs a hash tag; a PUBLISH from a script reaches the
 * whole cluster. keys() scans every master, and watch() hears expiries from every master. A future
 * script or command over several keys must keep them in one slot with a hash tag (`{…}` in the key).
 */
import { Redis } from 'ioredis';
import { RedisChangeFeed } from './redis-change-feed.ts';
import {
  closeConnection,
  openRedisConnection,
  type RedisClient,
  scanKeys,
  type RedisConnectionOptions,
  whenReady,
  withTimeout,
} from './redis-connection.ts';
import type { ChangeKind, ChangeListener, SetOptions, Store } from './store.ts';
import { isRedisOutage } from './redis-outage.ts';
import { StoreError, StoreUnavailableError } from './store.ts';

export interface RedisStoreOptions extends RedisConnectionOptions {
  /** Prepended to every key, so several stores share one Redis; keys() and watch() see only theirs. */
  namespace?: string;
  /** How long ping() waits for PONG (default 1000 ms). */
  pingTimeoutMs?: number;
  /**
   * May add the flags expiry notifications need to the server's notify-keyspace-events with
   * CONFIG SET (default false: never changes the server's configuration).
   */
  setKeyspaceEvents?: boolean;
  /** How long connect() waits for the first connection (default 10 s). */
  connectTimeoutMs?: number;
  /** Hears what nobody awaits: connection errors and watch listeners that throw. */
  onError?: (err: Error) => void;
}

// KEYS[1] key; ARGV value, ttl in ms or '', 'NX' or '', channel, announcement.
const setScript = `
local args = {'SET', KEYS[1], ARGV[1]}
if ARGV[2] ~= '' then args[#args + 1] = 'PX'; args[#args + 1] = ARGV[2] end
if ARGV[3] == 'NX' then args[#args + 1] = 'NX' end
if not redis.call(unpack(args)) then return 0 end
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1`;

// KEYS[1] key; ARGV '1' when a value is expected (else the key must be missing), expected value,
// new value, ttl in ms or '', channel, announcement.
const compareAndSetScript = `
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '1' then
  if current ~= ARGV[2] then return 0 end
elseif current then return 0 end
if ARGV[4] ~= '' then redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
else redis.call('SET', KEYS[1], ARGV[3]) end
redis.call('PUBLISH', ARGV[5], ARGV[6])
return 1`;

// KEYS[1] key; ARGV channel, announcement.
const deleteScript = `
local n = redis.call('DEL', KEYS[1])
if n == 1 then redis.call('PUBLISH', ARGV[1], ARGV[2]) end
return n`;

// KEYS[1] counter; ARGV by, ttl in ms or ''. Only a counter this call creates gets the expiry.
const incrementScript = `
local created = redis.call('EXISTS', KEYS[1]) == 0
local n = redis.call('INCRBY', KEYS[1], ARGV[1])
if created and ARGV[2] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return n`;

// KEYS[1] list; ARGV item, max length or '', ttl in ms or '', channel, announcement.
const appendScript = `
local n = redis.call('RPUSH', KEYS[1], ARGV[1])
local max = tonumber(ARGV[2])
if max and n > max then
  redis.call('LTRIM', KEYS[1], -max, -1)
  n = max
end
if ARGV[3] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
redis.call('PUBLISH', ARGV[4], ARGV[5])
return n`;

// KEYS[1] list; ARGV channel, announcement.
const takeAllScript = `
local items = redis.call('LRANGE', KEYS[1], 0, -1)
if #items > 0 then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[1], ARGV[2])
end
return items`;

// KEYS[1] list; ARGV channel, announcement when it changed, announcement when it went, items...
const removeItemsScript = `
local removed = 0
for i = 4, #ARGV do removed = removed + redis.call('LREM', KEYS[1], 1, ARGV[i]) end
if removed > 0 then
  if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PUBLISH', ARGV[1], ARGV[2])
  else redis.call('PUBLISH', ARGV[1], ARGV[3]) end
end
return removed`;

/** The scripts above, as ioredis defines them on the connection (defineCommand). */
interface StoreScripts {
  storeSet(
    key: string,
    value: string,
    ttlMs: string,
    mode: string,
    channel: string,
    note: string,
  ): Promise<number>;
  storeCompareAndSet(
    key: string,
    expects: string,
    expected: string,
    value: string,
    ttlMs: string,
    channel: string,
    note: string,
  ): Promise<number>;
  storeDelete(key: string, channel: string, note: string): Promise<number>;
  storeIncrement(key: string, by: number, ttlMs: string): Promise<number>;
  storeAppend(
    key: string,
    item: string,
    max: string,
    ttlMs: string,
    channel: string,
    note: string,
  ): Promise<number>;
  storeTakeAll(key: string, channel: string, note: string): Promise<string[]>;
  storeRemoveItems(
    key: string,
    channel: string,
    changed: string,
    gone: string,
    ...items: string[]
  ): Promise<number>;
}

interface Watcher {
  prefix: string;
  listener: ChangeListener;
}

export class RedisStore implements Store {
  readonly kind = 'redis';
  /** Prefix of every key this store writes in Redis. */
  readonly namespace: string;
  private readonly options: RedisStoreOptions;
  private readonly client: RedisClient;
  private readonly changeChannel: string;
  private readonly expiredChannel: string;
  private readonly watchers = new Set<Watcher>();
  private feed: RedisChangeFeed | undefined;
  private listening: Promise<void> | undefined;
  private closed = false;

  /** Connects in the background; commands fail until the connection is up (see connect()). */
  constructor(options: RedisStoreOptions = {}) {
    this.options = options;
    this.namespace = options.namespace ?? '';
    this.client = openRedisConnection(options, 'gatehouse-store');
    this.client.on('error', (err: Error) => this.options.onError?.(err));
    // A restarted server may have come up without the notification flags.
    this.client.on('ready', () => void this.feed?.enableExpiryEvents());
    this.client.defineCommand('storeSet', { numberOfKeys: 1, lua: setScript });
    this.client.defineCommand('storeCompareAndSet', { numberOfKeys: 1, lua: compareAndSetScript });
    this.client.defineCommand('storeDelete', { numberOfKeys: 1, lua: deleteScript });
    this.client.defineCommand('storeIncrement', { numberOfKeys: 1, lua: incrementScript });
    this.client.defineCommand('storeAppend', { numberOfKeys: 1, lua: appendScript });
    this.client.defineCommand('storeTakeAll', { numberOfKeys: 1, lua: takeAllScript });
    this.client.defineCommand('storeRemoveItems', { numberOfKeys: 1, lua: removeItemsScript });
    // A cluster has database 0 only.
    const db = this.client instanceof Redis ? (this.client.options.db ?? 0) : 0;
    this.changeChannel = `gatehouse:store:changes@${db}`;
    this.expiredChannel = `__keyevent@${db}__:expired`;
  }

  /** Resolves once connected, so the first commands do not fail. */
  static async connect(options: RedisStoreOptions = {}): Promise<RedisStore> {
    const store = new RedisStore(options);
    try {
      await whenReady(store.client, options.connectTimeoutMs ?? 10_000);
    } catch (err) {
      await store.close();
      throw new StoreUnavailableError(`cannot connect to redis: ${(err as Error).message}`, { cause: err });
    }
    return store;
  }

  get(key: string): Promise<string | undefined> {
    return this.run('GET', async () => (await this.client.get(this.redisKey(key))) ?? undefined);
  }

  set(key: string, value: string, options: SetOptions = {}): Promise<boolean> {
    const redisKey = this.redisKey(key);
    return this.run('SET', async () => {
      const ttlMs = milliseconds(options.ttlSeconds);
      const mode = options.ifAbsent ? 'NX' : '';
      const note = announcement(redisKey, 'set');
      return (await this.scripts.storeSet(redisKey, value, ttlMs, mode, this.changeChannel, note)) === 1;
    });
  }

  compareAndSet(
    key: string,
    expected: string | undefined,
    value: string,
    options: { ttlSeconds?: number } = {},
  ): Promise<boolean> {
    const redisKey = this.redisKey(key);
    return this.run('SET', async () => {
      const ttlMs = milliseconds(options.ttlSeconds);
      const expects = expected === undefined ? '0' : '1';
      const note = announcement(redisKey, 'set');
      const { changeChannel } = this;
      const set = this.scripts.storeCompareAndSet(
        redisKey,
        expects,
        expected ?? '',
        value,
        ttlMs,
        changeChannel,
        note,
      );
      return (await set) === 1;
    });
  }

  delete(key: string): Promise<boolean> {
    const redisKey = this.redisKey(key);
    return this.run('DEL', async () => {
      const note = announcement(redisKey, 'delete');
      return (await this.scripts.storeDelete(redisKey, this.changeChannel, note)) === 1;
    });
  }

  exists(key: string): Promise<boolean> {
    return this.run('EXISTS', async () => (await this.client.exists(this.redisKey(key))) === 1);
  }

  ttl(key: string): Promise<number | undefined> {
    return this.run('PTTL', async () => {
      const ms = await this.client.pttl(this.redisKey(key));
      if (ms === -2) return undefined;
      return ms === -1 ? Infinity : ms / 1000;
    });
  }

  increment(key: string, options: { by?: number; ttlSeconds?: number } = {}): Promise<number> {
    const by = options.by ?? 1;
    return this.run('INCRBY', () => {
      if (!Number.isSafeInteger(by)) throw new StoreError(`cannot increment by ${by}: not an integer`);
      return this.scripts.storeIncrement(this.redisKey(key), by, milliseconds(options.ttlSeconds));
    });
  }

  append(
    key: string,
    value: string,
    options: { ttlSeconds?: number; maxLength?: number } = {},
  ): Promise<number> {
    const redisKey = this.redisKey(key);
    return this.run('RPUSH', () => {
      const { maxLength } = options;
      if (maxLength !== undefined && !(Number.isSafeInteger(maxLength) && maxLength > 0))
        throw new StoreError(`maxLength must be a positive integer, got ${maxLength}`);
      const max = maxLength === undefined ? '' : String(maxLength);
      const ttlMs = milliseconds(options.ttlSeconds);
      const note = announcement(redisKey, 'set');
      return this.scripts.storeAppend(redisKey, value, max, ttlMs, this.changeChannel, note);
    });
  }

  takeAll(key: string): Promise<string[]> {
    const redisKey = this.redisKey(key);
    return this.run('LRANGE', () =>
      this.scripts.storeTakeAll(redisKey, this.changeChannel, announcement(redisKey, 'delete')),
    );
  }

  list(key: string): Promise<string[]> {
    return this.run('LRANGE', () => this.client.lrange(this.redisKey(key), 0, -1));
  }

  removeItems(key: string, items: string[]): Promise<number> {
    const redisKey = this.redisKey(key);
    return this.run('LREM', async () => {
      if (items.length === 0) return 0;
      const changed = announcement(redisKey, 'set');
      const gone = announcement(redisKey, 'delete');
      return this.scripts.storeRemoveItems(redisKey, this.changeChannel, changed, gone, ...items);
    });
  }

  touch(key: string, ttlSeconds: number): Promise<boolean> {
    return this.run('PEXPIRE', async () => {
      return (await this.client.pexpire(this.redisKey(key), Number(milliseconds(ttlSeconds)))) === 1;
    });
  }

  /** SCAN on every master: a cluster spreads the keys over its nodes. */
  keys(prefix: string): Promise<string[]> {
    return this.run('SCAN', async () => {
      const pattern = `${escapeGlob(this.namespace + prefix)}*`;
      const found = await scanKeys(this.client, pattern);
      return found.map((k) => k.slice(this.namespace.length));
    });
  }

  async watch(prefix: string, listener: ChangeListener): Promise<() => Promise<void>> {
    this.assertOpen();
    this.listening ??= this.startListening().catch((err: unknown) => {
      this.listening = undefined;
      throw err;
    });
    await this.listening;
    const watcher = { prefix, listener };
    this.watchers.add(watcher);
    return async () => void this.watchers.delete(watcher);
  }

  /**
   * Resolves when Redis answers and, once watching, every node has the keyspace notifications the
   * watch needs (looked at again here while one lacked them, so readiness comes back once fixed).
   */
  ping(): Promise<void> {
    const timeoutMs = this.options.pingTimeoutMs ?? 1000;
    return this.run('PING', async () => {
      await withTimeout(this.client.ping(), timeoutMs, 'PING');
      if (this.feed?.problem === undefined) return;
      await this.feed.enableExpiryEvents();
      const problem = this.feed.problem;
      if (problem !== undefined) throw new StoreError(problem);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.watchers.clear();
    await this.feed?.close();
    await closeConnection(this.client);
  }

  /** One change feed per store, shared by all its watchers and kept until close. */
  private async startListening(): Promise<void> {
    const feed = new RedisChangeFeed({
      client: this.client,
      changeChannel: this.changeChannel,
      expiredChannel: this.expiredChannel,
      connectTimeoutMs: this.options.connectTimeoutMs ?? 10_000,
      setKeyspaceEvents: this.options.setKeyspaceEvents ?? false,
      hear: (channel, message) => this.hear(channel, message),
      resync: () => this.resync(),
      onError: (err) => this.options.onError?.(err),
    });
    await feed.start();
    if (this.closed) {
      await feed.close();
      throw new StoreUnavailableError('redis store is closed');
    }
    this.feed = feed;
  }

  /**
   * The feed listens again after it was cut off (a reconnect, a node of a cluster replaced): every
   * watcher hears `resync`. A change made after that is announced to us; one made before is there to
   * be read: none falls in between (redis-change-feed.ts).
   */
  private resync(): void {
    for (const { prefix, listener } of this.watchers) {
      try {
        listener({ key: prefix, kind: 'resync' });
      } catch (err) {
        this.options.onError?.(err as Error);
      }
    }
  }

  private hear(channel: string, message: string): void {
    const change =
      channel === this.expiredChannel ? { key: message, kind: 'expire' as const } : parse(message);
    if (!change?.key.startsWith(this.namespace)) return;
    const key = change.key.slice(this.namespace.length);
    for (const { prefix, listener } of this.watchers) {
      if (!key.startsWith(prefix)) continue;
      try {
        listener({ key, kind: change.kind });
      } catch (err) {
        this.options.onError?.(err as Error);
      }
    }
  }

  private async run<T>(command: string, execute: () => Promise<T>): Promise<T> {
    this.assertOpen();
    try {
      return await execute();
    } catch (err) {
      if (err instanceof StoreError) throw err;
      const Failure = isRedisOutage(err) ? StoreUnavailableError : StoreError;
      throw new Failure(`redis ${command} failed: ${(err as Error).message}`, { cause: err });
    }
  }

  private redisKey(key: string): string {
    return this.namespace + key;
  }

  private get scripts(): StoreScripts {
    return this.client as unknown as StoreScripts;
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreUnavailableError('redis store is closed');
  }
}

/** A lifetime as the scripts take it: whole milliseconds, '' for none. */
function milliseconds(ttlSeconds: number | undefined): string {
  if (ttlSeconds === undefined) return '';
  if (!(ttlSeconds > 0) || !Number.isFinite(ttlSeconds))
    throw new StoreError(`ttlSeconds must be a positive number, got ${ttlSeconds}`);
  return String(Math.max(1, Math.round(ttlSeconds * 1000)));
}

function announcement(redisKey: string, kind: ChangeKind): string {
  return JSON.stringify({ key: redisKey, kind });
}

function parse(message: string): { key: string; kind: ChangeKind } | undefined {
  try {
    const { key, kind } = JSON.parse(message) as { key?: unknown; kind?: unknown };
    if (typeof key === 'string' && (kind === 'set' || kind === 'delete')) return { key, kind };
  } catch {
    // Not one of ours: someone else published on the channel.
  }
  return undefined;
}

/** SCAN MATCH treats * ? [ ] and \ specially; a prefix is literal text. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
