/**
 * How Gatehouse talks to Redis, for the store and for the Redis bus alike: commands fail at once
 * while the connection is down (a publish or an HTTP handler never hangs on an outage), and the
 * connection itself keeps reconnecting in the background for as long as the process lives.
 */
import { Redis, type RedisOptions } from 'ioredis';

export interface RedisConnectionOptions {
  /** `redis://[user:password@]host:port[/db]`; default redis://127.0.0.1:6379. */
  url?: string;
  /** Extra ioredis options (TLS, timeouts …); the fail-fast settings are applied on top. */
  redis?: RedisOptions;
}

const maxReconnectDelayMs = 2000;

export function openRedisConnection(options: RedisConnectionOptions, name: string): Redis {
  return new Redis(options.url ?? 'redis://127.0.0.1:6379', {
    commandTimeout: 5000,
    connectionName: name,
    retryStrategy: (attempt) => Math.min(attempt * 100, maxReconnectDelayMs),
    ...options.redis,
    // No offline queue: a command sent while disconnected is rejected instead of parked.
    enableOfflineQueue: false,
    // A command in flight when the connection drops is rejected, not resent after reconnecting.
    maxRetriesPerRequest: 0,
  });
}

/** Resolves once `client` can take commands; rejects after `timeoutMs` or when it gave up. */
export function whenReady(client: Redis, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('end', onEnd);
      if (err) reject(err);
      else resolve();
    };
    const onReady = () => done();
    const onEnd = () => done(new Error('redis connection closed'));
    const timer = setTimeout(() => done(new Error(`redis not ready after ${timeoutMs} ms`)), timeoutMs);
    client.once('ready', onReady);
    client.once('end', onEnd);
  });
}

/** QUIT when connected (the server finishes what it has), otherwise just stop reconnecting. */
export async function closeConnection(client: Redis): Promise<void> {
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
