/**
 * Where a RedisStore hears of changes (see redis-store.ts): the announcements its scripts publish
 * on the change channel, and Redis's own keyspace notifications of expired keys.
 *
 * On a single server one subscriber connection listens to both. On a Redis Cluster a PUBLISH
 * reaches every node, so one subscription to the change channel (through a Cluster client of its
 * own) hears every announcement once; expiry notifications, though, are raised only by the node
 * that holds the key, so there is a subscriber on every master. The set of masters is compared
 * with the cluster's slot table on every refresh of it (a failover, a node added), and subscribers
 * follow.
 *
 * Expiry notifications need `notify-keyspace-events` to contain `E` and `x` (or `A`) on every node
 * that holds keys. The feed adds those flags with CONFIG SET when it starts and whenever a node
 * (re)connects; managed Redis usually refuses CONFIG, so there the parameter must be set in the
 * service's configuration, or 'expire' changes are never heard.
 */
import { Cluster, type Redis } from 'ioredis';
import {
  closeConnection,
  duplicateConnection,
  masterNodes,
  type RedisClient,
  whenReady,
} from './redis-connection.ts';
import { StoreError } from './store.ts';

export interface ChangeFeedOptions {
  /** The store's commands connection: its settings, and the cluster's masters. */
  client: RedisClient;
  changeChannel: string;
  expiredChannel: string;
  connectTimeoutMs: number;
  hear(channel: string, message: string): void;
  onError(err: Error): void;
}

const reconnectDelay = (attempt: number) => Math.min(attempt * 100, 2000);

export class RedisChangeFeed {
  private readonly options: ChangeFeedOptions;
  private readonly connections = new Set<RedisClient>();
  /** Cluster only: the expiry subscriber of each master, by `host:port`. */
  private readonly expiryListeners = new Map<string, Redis>();
  private readonly onRefresh = () => this.followMasters();
  private closed = false;

  constructor(options: ChangeFeedOptions) {
    this.options = options;
  }

  /** Resolves once both kinds of change are listened to; rejects when Redis cannot be reached. */
  async start(): Promise<void> {
    const { client, changeChannel, expiredChannel } = this.options;
    try {
      if (client instanceof Cluster) {
        await this.subscribe(this.open(client, 'gatehouse-store-watch'), [changeChannel]);
        this.followMasters();
        client.on('refresh', this.onRefresh);
        const listeners = [...this.expiryListeners.values()];
        await Promise.all(listeners.map((l) => whenReady(l, this.options.connectTimeoutMs)));
      } else {
        await this.subscribe(this.open(client, 'gatehouse-store-watch'), [changeChannel, expiredChannel]);
      }
    } catch (err) {
      await this.close();
      throw new StoreError(`cannot watch redis: ${(err as Error).message}`, { cause: err });
    }
    await this.enableExpiryEvents();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.options.client.off('refresh', this.onRefresh);
    await Promise.all([...this.connections].map(closeConnection));
    this.connections.clear();
    this.expiryListeners.clear();
  }

  /** Adds the flags expiry notifications need on every master, keeping what else is configured. */
  async enableExpiryEvents(): Promise<void> {
    await Promise.all(masterNodes(this.options.client).map((node) => this.enableOn(node)));
  }

  private async enableOn(node: Redis): Promise<void> {
    try {
      const [, flags = ''] = (await node.config('GET', 'notify-keyspace-events')) as string[];
      const missing = (flags.includes('E') ? '' : 'E') + (/[xA]/.test(flags) ? '' : 'x');
      if (missing) await node.config('SET', 'notify-keyspace-events', flags + missing);
    } catch (err) {
      // Managed Redis refuses CONFIG; the parameter then has to be set there (see the file comment).
      this.options.onError(
        new StoreError(`cannot enable expiry notifications: ${(err as Error).message}`, { cause: err }),
      );
    }
  }

  private open(like: RedisClient, name: string): RedisClient {
    const connection = duplicateConnection(like, { connectionName: name });
    connection.on('error', (err: Error) => this.options.onError(err));
    connection.on('message', (channel: string, message: string) => this.options.hear(channel, message));
    this.connections.add(connection);
    return connection;
  }

  /** Subscribing again after a reconnect is ioredis's job (autoResubscribe). */
  private async subscribe(connection: RedisClient, channels: string[]): Promise<void> {
    await whenReady(connection, this.options.connectTimeoutMs);
    await connection.subscribe(...channels);
  }

  /** Cluster: an expiry subscriber on every current master, none on a node that is not one. */
  private followMasters(): void {
    if (this.closed) return;
    const masters = new Map(masterNodes(this.options.client).map((n) => [addressOf(n), n]));
    for (const [address, listener] of this.expiryListeners) {
      if (masters.has(address)) continue;
      this.expiryListeners.delete(address);
      this.connections.delete(listener);
      void closeConnection(listener);
    }
    for (const [address, node] of masters) {
      if (this.expiryListeners.has(address)) continue;
      // A node of the cluster client does not reconnect by itself and connects lazily; this one must.
      const listener = node.duplicate({
        connectionName: 'gatehouse-store-expiry',
        lazyConnect: false,
        retryStrategy: reconnectDelay,
      });
      listener.on('error', (err: Error) => this.options.onError(err));
      listener.on('message', (channel: string, message: string) => this.options.hear(channel, message));
      // A node that comes back may have lost the flags (a restart without them in its config).
      listener.on('ready', () => {
        const current = masterNodes(this.options.client).find((n) => addressOf(n) === address);
        if (current) void this.enableOn(current);
      });
      listener.subscribe(this.options.expiredChannel).catch((err: Error) => this.options.onError(err));
      this.connections.add(listener);
      this.expiryListeners.set(address, listener);
    }
  }
}

function addressOf(node: Redis): string {
  return `${node.options.host}:${node.options.port}`;
}
