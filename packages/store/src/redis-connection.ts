/**
 * How Gatehouse talks to Redis, for the store and for the Redis bus alike: commands fail at once
 * while the connection is down (a publish or an HTTP handler never hangs on an outage), and the
 * connection itself keeps reconnecting in the background for as long as the process lives.
 *
 * A Redis Cluster (`cluster: true`) is reached through an ioredis Cluster client, which routes each
 * command by its key's hash slot and follows the cluster's topology (MOVED, failovers). The URL
 * then names one or more of its nodes, comma-separated, to discover the rest from. Everything that
 * is per node rather than per key (CLIENT UNBLOCK, SCAN, CONFIG, keyspace notifications) goes to
 * the nodes themselves: see `nodeForKey` and `masterNodes`.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { redisRefusal } from './redis-refusal.ts';
import { parseRedisUrl } from './redis-url.ts';

export interface RedisConnectionOptions {
  /**
   * `redis://[user:password@]host:port[/db]` (`rediss://` for TLS); default redis://127.0.0.1:6379.
   * For a cluster, `redis://[user:password@]host:port[,host:port…]`: nodes to discover it from.
   */
  url?: string;
  /** The URL names nodes of a Redis Cluster (see the file comment). */
  cluster?: boolean;
  /** Extra ioredis options (TLS, timeouts …); the fail-fast settings are applied on top. */
  redis?: RedisOptions;
}

/** A connection to a single Redis server or to a Redis Cluster; both take the same commands. */
export type RedisClient = Redis | Cluster;

const defaultUrl = 'redis://127.0.0.1:6379';
const maxReconnectDelayMs = 2000;
const reconnectDelay = (attempt: number) => Math.min(attempt * 100, maxReconnectDelayMs);

export function openRedisConnection(options: RedisConnectionOptions, name: string): RedisClient {
  if (options.cluster) return openCluster(options, name);
  return new Redis(options.url ?? defaultUrl, {
    commandTimeout: 5000,
    connectionName: name,
    retryStrategy: reconnectDelay,
    ...options.redis,
    // No offline queue: a command sent while disconnected is rejected instead of parked.
    enableOfflineQueue: false,
    // A command in flight when the connection drops is rejected, not resent after reconnecting.
    maxRetriesPerRequest: 0,
  });
}

/** The nodes each cluster was given to start from (ioredis keeps them private). */
const clusterSeeds = new WeakMap<Cluster, Array<{ host: string; port: number }>>();

function openCluster(options: RedisConnectionOptions, name: string): Cluster {
  const target = parseRedisUrl(options.url ?? defaultUrl);
  if (target.db !== 0) throw new Error(`a Redis Cluster has database 0 only, not ${target.db}`);
  const cluster = new Cluster(target.nodes, {
    // No offline queue while the cluster is unreachable: commands are rejected, as above.
    enableOfflineQueue: false,
    // Nor retries of a command whose node is unreachable (by default 16 of them, 1.6 s): it fails
    // at once, and the slot table (refreshed every few seconds) follows a failover by itself.
    retryDelayOnFailover: 0,
    retryDelayOnClusterDown: 0,
    clusterRetryStrategy: reconnectDelay,
    // A node that restarts without the slots moving is connected again (blocking readers need it).
    clusterNodeRetryStrategy: reconnectDelay,
    redisOptions: {
      commandTimeout: 5000,
      connectionName: name,
      ...(target.username !== undefined && { username: target.username }),
      ...(target.password !== undefined && { password: target.password }),
      ...(target.tls && { tls: {} }),
      ...options.redis,
      maxRetriesPerRequest: 0,
    },
  });
  clusterSeeds.set(cluster, target.nodes);
  return cluster;
}

/**
 * Another connection with the same settings (`changes` on top), e.g. for a blocking read or a
 * subscriber that must not share the commands' connection.
 */
export function duplicateConnection(client: RedisClient, changes: Partial<RedisOptions>): RedisClient {
  if (client instanceof Redis) return client.duplicate(changes);
  const redisOptions = { ...client.options.redisOptions, ...changes };
  return client.duplicate(undefined, { ...client.options, redisOptions });
}

/**
 * The connection to the master that holds `key`'s slot: commands sent on it share the connection
 * the client uses for that key (so CLIENT ID names the connection a blocking read on the key runs
 * on). The client itself for a single server; undefined while a cluster's slots are not known.
 */
export function nodeForKey(client: RedisClient, key: string): Redis | undefined {
  if (client instanceof Redis) return client;
  const address = client.slots[clusterSlot(key)]?.[0];
  return client.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === address);
}

/** Every master: the client itself for a single server, else the cluster's current masters. */
export function masterNodes(client: RedisClient): Redis[] {
  return client instanceof Redis ? [client] : client.nodes('master');
}

/**
 * Every key matching the SCAN `pattern` on every master (a cluster spreads its keys over them), each
 * once (SCAN may return a key twice when the keyspace is resized meanwhile).
 */
export async function scanKeys(client: RedisClient, pattern: string): Promise<string[]> {
  const found = new Set<string>();
  const masters = masterNodes(client);
  if (masters.length === 0) throw new Error('no redis node is known yet');
  for (const node of masters) {
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      for (const k of batch) found.add(k);
    } while (cursor !== '0');
  }
  return [...found];
}

/**
 * Resolves once `client` can take commands; rejects after `timeoutMs`, when it gave up, or at the
 * first error that no retry cures (wrong credentials, a refused certificate: redis-refusal.ts). A
 * cluster's connections to its masters are opened first: ioredis opens one on its first command,
 * and without an offline queue the commands sent to that node meanwhile would fail.
 */
export async function whenReady(client: RedisClient, timeoutMs: number): Promise<void> {
  await clientReady(client, timeoutMs);
  if (client instanceof Redis) return;
  await Promise.all(
    client.nodes('master').map(async (node) => {
      if (node.status !== 'wait') return;
      // A master that cannot be reached now fails its commands at once, as any outage does.
      await node.connect().catch(() => {});
    }),
  );
}

function clientReady(client: RedisClient, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    let settled = false;
    let probing = false;
    const done = (err?: Error) => {
      settled = true;
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('end', onEnd);
      client.off('error', onError);
      if (err) reject(err);
      else resolve();
    };
    const onReady = () => done();
    const onEnd = () => done(new Error('redis connection closed'));
    // A cluster reports its node's error as the reason it could not load the slots.
    const refused = (err: Error & { lastNodeError?: Error }) => {
      const refusal = redisRefusal(err.lastNodeError ?? err);
      if (refusal !== undefined && !settled) done(new Error(refusal, { cause: err }));
      return refusal !== undefined;
    };
    // A cluster's seeds are probed again after each of its errors (paced by its retries) while
    // not ready: on a loaded machine a refused certificate can come out as a reset before its
    // alert is read, and a single round would then say nothing.
    const onError = (err: Error & { lastNodeError?: Error }) => {
      if (refused(err) || settled || probing || !(client instanceof Cluster)) return;
      probing = true;
      void probeSeeds(client, refused).finally(() => {
        probing = false;
      });
    };
    const timer = setTimeout(() => done(new Error(`redis not ready after ${timeoutMs} ms`)), timeoutMs);
    client.once('ready', onReady);
    client.once('end', onEnd);
    client.on('error', onError);
  });
}

/**
 * Asks the nodes a cluster was given to start from for a PING, each once on a connection of its
 * own: ioredis asks them for the slots on connections that swallow their errors (only "Connection
 * is closed" comes out), so a refused certificate would read as an outage. The probe's errors do not.
 */
function probeSeeds(cluster: Cluster, report: (err: Error) => unknown): Promise<unknown> {
  return Promise.allSettled(
    (clusterSeeds.get(cluster) ?? []).map((seed) => {
      const probe = new Redis({
        ...cluster.options.redisOptions,
        ...seed,
        lazyConnect: true,
        retryStrategy: () => null,
        maxRetriesPerRequest: 0,
      });
      probe.on('error', report);
      return probe
        .connect()
        .then(() => probe.ping())
        .catch(report)
        .finally(() => probe.disconnect());
    }),
  );
}

/** QUIT when connected (the server finishes what it has), otherwise just stop reconnecting. */
export async function closeConnection(client: RedisClient): Promise<void> {
  if (client.status === 'ready') {
    try {
      await client.quit();
      return;
    } catch {
      // The connection went away meanwhile: disconnecting below is all that is left to do.
    }
  }
  client.disconnect();
}

export function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The hash slot of a key, as Redis Cluster computes it: CRC16 (XMODEM) of the key, or of the part
 * between the first `{` and the next `}` when that part is not empty (a hash tag), modulo 16384.
 */
export function clusterSlot(key: string): number {
  const bytes = Buffer.from(key);
  const open = bytes.indexOf(0x7b);
  if (open !== -1) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) return crc16(bytes.subarray(open + 1, close)) % 16384;
  }
  return crc16(bytes) % 16384;
}

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}
