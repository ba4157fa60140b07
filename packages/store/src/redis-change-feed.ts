/**
 * Where a RedisStore hears of changes (see redis-store.ts): the announcements its scripts publish
 * on the change channel, and Redis's own keyspace notifications of expired keys.
 *
 * Listeners are plain subscriber connections. On a single server one listener subscribes to both
 * channels. On a Redis Cluster a PUBLISH reaches every node, so the change channel is listened to on
 * one master only (each announcement is heard once); expiry notifications, though, are raised only
 * by the node that holds the key, so every master has a listener for them. The masters are compared
 * with the cluster's slot table on each refresh of it (a failover, a node added): listeners follow,
 * and the change channel moves to another master when its node is no longer one.
 *
 * A listener that reconnects is subscribed again by ioredis; once our own SUBSCRIBE, sent after
 * ioredis' on the same connection, is answered, the feed calls `resync`: changes made while it was
 * cut off were not heard, those made from then on are. A listener added for a master that appeared
 * after the start calls it too (expiries there may have gone unheard).
 *
 * Expiry notifications need `notify-keyspace-events` to contain `E` and `x` (or `A`) on every node
 * that holds keys. The feed reads the parameter (CONFIG GET) when it starts and whenever a node
 * (re)connects. It changes it (CONFIG SET, adding only the missing flags) only when allowed to
 * (`setKeyspaceEvents`): a shared Redis's configuration is its operator's. Otherwise a node without
 * the flags is a `problem`, which fails readiness (RedisStore.ping) with a message saying what to
 * set, until a later look finds them. A server that refuses CONFIG GET too (managed Redis often
 * does) cannot be checked: that is said once, and its parameter group must have the flags.
 */
import { Cluster, type Redis } from 'ioredis';
import {
  closeConnection,
  duplicateConnection,
  masterNodes,
  type RedisClient,
  whenReady,
} from './redis-connection.ts';
import { isRedisOutage } from './redis-outage.ts';
import { StoreError, StoreUnavailableError } from './store.ts';

export interface ChangeFeedOptions {
  /** The store's commands connection: its settings, and the cluster's masters. */
  client: RedisClient;
  changeChannel: string;
  expiredChannel: string;
  connectTimeoutMs: number;
  /** May CONFIG SET add the flags expiry notifications need (else the server must have them). */
  setKeyspaceEvents: boolean;
  hear(channel: string, message: string): void;
  /** The feed listens again after it was cut off: changes meanwhile went unheard. */
  resync(): void;
  onError(err: Error): void;
}

/** A subscriber connection and the channels it listens to. */
interface Listener {
  connection: Redis;
  channels: string[];
}

const reconnectDelay = (attempt: number) => Math.min(attempt * 100, 2000);
const standalone = 'standalone';

export class RedisChangeFeed {
  private readonly options: ChangeFeedOptions;
  /** By master `host:port`; one entry, `standalone`, on a single server. */
  private readonly listeners = new Map<string, Listener>();
  private readonly onRefresh = () => this.followMasters();
  /** Nodes (`host:port`) whose notify-keyspace-events lacks flags the feed needs, and why. */
  private readonly missingFlags = new Map<string, string>();
  /** Nodes that refused CONFIG GET, said once each. */
  private readonly unchecked = new Set<string>();
  private started = false;
  private closed = false;

  constructor(options: ChangeFeedOptions) {
    this.options = options;
  }

  private get cluster(): boolean {
    return this.options.client instanceof Cluster;
  }

  /** Resolves once both kinds of change are listened to; rejects when Redis cannot be reached. */
  async start(): Promise<void> {
    const { client, changeChannel, expiredChannel } = this.options;
    try {
      if (!this.cluster) {
        const connection = duplicateConnection(client, { connectionName: 'gatehouse-store-watch' }) as Redis;
        await this.listen(standalone, connection, [changeChannel, expiredChannel]);
      } else {
        const masters = [...mastersByAddress(client)].sort(([a], [b]) => a.localeCompare(b));
        if (masters.length === 0) throw new Error('no redis cluster node is known yet');
        await Promise.all(
          masters.map(([address, node], i) =>
            this.listen(
              address,
              this.listenerFor(node),
              i === 0 ? [changeChannel, expiredChannel] : [expiredChannel],
            ),
          ),
        );
        client.on('refresh', this.onRefresh);
      }
    } catch (err) {
      await this.close();
      throw new StoreUnavailableError(`cannot watch redis: ${(err as Error).message}`, { cause: err });
    }
    this.started = true;
    await this.enableExpiryEvents();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.options.client.off('refresh', this.onRefresh);
    const listeners = [...this.listeners.values()];
    this.listeners.clear();
    await Promise.all(listeners.map((l) => closeConnection(l.connection)));
  }

  /** Adds the flags expiry notifications need on every master, keeping what else is configured. */
  async enableExpiryEvents(): Promise<void> {
    await Promise.all(masterNodes(this.options.client).map((node) => this.enableOn(node)));
  }

  /** Why expiry changes may go unheard (a node lacks the flags), or undefined when all is well. */
  get problem(): string | undefined {
    const [first] = this.missingFlags.values();
    return first;
  }

  private async enableOn(node: Redis): Promise<void> {
    const address = `${node.options.host}:${node.options.port}`;
    let flags: string;
    try {
      [, flags = ''] = (await node.config('GET', 'notify-keyspace-events')) as string[];
    } catch (err) {
      if (isRedisOutage(err)) return; // Looked at again when the node is back.
      // Managed Redis refuses CONFIG: its parameter group must have the flags (file comment).
      if (!this.unchecked.has(address)) {
        this.unchecked.add(address);
        this.options.onError(
          new StoreError(
            `cannot read notify-keyspace-events on redis ${address} (${(err as Error).message}); ` +
              "it must contain 'E' and 'x', or expired keys go unnoticed",
            { cause: err },
          ),
        );
      }
      return;
    }
    const missing = (flags.includes('E') ? '' : 'E') + (/[xA]/.test(flags) ? '' : 'x');
    if (missing && this.options.setKeyspaceEvents) {
      try {
        await node.config('SET', 'notify-keyspace-events', flags + missing);
        this.missingFlags.delete(address);
      } catch (err) {
        this.noteMissing(address, flags, `CONFIG SET was refused: ${(err as Error).message}`);
      }
      return;
    }
    if (missing) this.noteMissing(address, flags, 'REDIS_SET_KEYSPACE_EVENTS is off');
    else this.missingFlags.delete(address);
  }

  private noteMissing(address: string, flags: string, why: string): void {
    const problem =
      `redis ${address} has notify-keyspace-events '${flags}', without 'E' and 'x' the store needs ` +
      `to hear expired keys (${why}): set notify-keyspace-events Ex in its configuration, or let ` +
      'Gatehouse set it with REDIS_SET_KEYSPACE_EVENTS=true';
    if (!this.missingFlags.has(address)) this.options.onError(new StoreError(problem));
    this.missingFlags.set(address, problem);
  }

  /** A subscriber to one master of the cluster, which (unlike the cluster's own) reconnects. */
  private listenerFor(node: Redis): Redis {
    return node.duplicate({
      connectionName: 'gatehouse-store-watch',
      lazyConnect: false,
      enableOfflineQueue: true,
      retryStrategy: reconnectDelay,
    });
  }

  /** Subscribes `connection` to `channels`; from then on every reconnect ends in a resync. */
  private async listen(address: string, connection: Redis, channels: string[]): Promise<void> {
    const listener: Listener = { connection, channels };
    this.listeners.set(address, listener);
    connection.on('error', (err: Error) => this.options.onError(err));
    connection.on('message', (channel: string, message: string) => this.options.hear(channel, message));
    await whenReady(connection, this.options.connectTimeoutMs);
    await connection.subscribe(...channels);
    connection.on('ready', () => void this.listeningAgain(address, listener));
  }

  private async listeningAgain(address: string, listener: Listener): Promise<void> {
    try {
      await listener.connection.subscribe(...listener.channels);
    } catch {
      return; // Cut off again: the next 'ready' tries again.
    }
    // A node that comes back may have lost the flags (a restart without them in its config).
    const node =
      address === standalone ? this.options.client : mastersByAddress(this.options.client).get(address);
    if (node) await this.enableOn(node as Redis);
    if (this.listeners.get(address) === listener) this.options.resync();
  }

  /** Cluster: a listener on every current master, none on a node that is not one any more. */
  private followMasters(): void {
    if (this.closed || !this.started) return;
    const masters = mastersByAddress(this.options.client);
    let changesLost = false;
    for (const [address, listener] of this.listeners) {
      if (masters.has(address)) continue;
      this.listeners.delete(address);
      this.missingFlags.delete(address);
      changesLost ||= listener.channels.includes(this.options.changeChannel);
      void closeConnection(listener.connection);
    }
    for (const [address, node] of masters) {
      if (this.listeners.has(address)) continue;
      this.addListener(address, node, [this.options.expiredChannel]);
    }
    const [first] = [...this.listeners].sort(([a], [b]) => a.localeCompare(b));
    if (changesLost && first) {
      // The change channel's node left: another master takes it over.
      first[1].channels.push(this.options.changeChannel);
      first[1].connection.subscribe(this.options.changeChannel).then(
        () => this.options.resync(),
        (err: Error) => this.options.onError(err),
      );
    }
  }

  /** A listener for a master that appeared after the start; it was not heard from until now. */
  private addListener(address: string, node: Redis, channels: string[]): void {
    this.listen(address, this.listenerFor(node), channels).then(
      () => {
        void this.enableOn(node);
        this.options.resync();
      },
      (err: Error) => {
        this.options.onError(err);
        // Tried again at the next refresh of the slot table.
        const listener = this.listeners.get(address);
        this.listeners.delete(address);
        if (listener) void closeConnection(listener.connection);
      },
    );
  }
}

function mastersByAddress(client: RedisClient): Map<string, Redis> {
  return new Map(masterNodes(client).map((n) => [`${n.options.host}:${n.options.port}`, n]));
}
