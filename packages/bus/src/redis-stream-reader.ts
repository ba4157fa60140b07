/**
 * The read loop behind every RedisBus subscription. Each subscription has a connection of its own,
 * because XREAD BLOCK and XREADGROUP BLOCK hold a connection until something arrives. The loop
 * survives a Redis restart: the blocked read fails when the connection drops, the loop reports the
 * error, waits until the connection is back, and goes on from the last entry it handled.
 */
import { BusError, isNotHandled, type Message, type MessageHandler, type Subscription } from './bus.ts';
import { closeConnection, nodeForKey, type RedisClient } from '@gatehouse/store/redis';
import { fromStreamEntry, type StreamEntry } from './redis-stream-entry.ts';

export interface ReaderSetup {
  /** The topic, as messages name it. */
  topic: string;
  /** The stream's key in Redis (the bus's key prefix + the topic). */
  key: string;
  /** The bus's shared connection, for commands that must not wait behind a blocked read. */
  commands: RedisClient;
  /** This reader's own connection. */
  connection: RedisClient;
  handler: MessageHandler;
  onError: ((err: Error, message?: Message) => void) | undefined;
  /** How long one blocking read waits for new entries. */
  blockMs: number;
  /** Entries asked for per read. */
  batchSize: number;
  /** The stream's epoch when the subscription started (redis-stream-epoch.ts). */
  epoch: string | undefined;
}

const maxRetryDelayMs = 2000;

export interface HandledEntries {
  /** Id of the last entry handled. */
  last: string | undefined;
  /** A group's entries from the first one its handler did not handle (NotHandledError) on. */
  left: StreamEntry[];
}

export abstract class StreamReader implements Subscription {
  protected readonly setup: ReaderSetup;
  /** The epoch of the stream being read, which the positions of the messages handled carry. */
  protected epoch: string | undefined;
  private readonly stop = new AbortController();
  private loop: Promise<void> = Promise.resolve();
  /** The connection's CLIENT ID while it is known, to interrupt a blocked read on close. */
  private clientId: number | undefined;
  /** `host:port` of the node the connection's CLIENT ID belongs to. */
  private node: string | undefined;

  constructor(setup: ReaderSetup) {
    this.setup = setup;
    this.epoch = setup.epoch;
  }

  start(): void {
    this.loop = this.run();
  }

  async close(): Promise<void> {
    if (!this.stop.signal.aborted) {
      this.stop.abort();
      await this.interruptRead();
      await closeConnection(this.setup.connection);
      await this.loop;
      await this.afterStop();
    }
    await this.loop;
  }

  protected get stopped(): boolean {
    return this.stop.signal.aborted;
  }

  /** One blocking read and the handling of what it returned. */
  protected abstract readOnce(): Promise<void>;

  /** Runs after the loop has ended and the connection is closed. */
  protected async afterStop(): Promise<void> {}

  /**
   * Hands entries to the handler one after another; returns the id of the last one handled. After
   * close it stops early unless `group` (a group's batch is already this member's to handle); a
   * group also stops at an entry whose handler threw NotHandledError, and the entries from there on
   * are returned as `left`.
   */
  protected async handle(entries: StreamEntry[], group = false): Promise<HandledEntries> {
    let last: string | undefined;
    for (const [i, entry] of entries.entries()) {
      if (this.stopped && !group) break;
      const message = fromStreamEntry(this.setup.topic, entry, this.epoch);
      if (message) {
        try {
          // Only wait for handlers that return a promise: a synchronous one costs no microtask.
          const done = this.setup.handler(message);
          if (done) await done;
        } catch (err) {
          if (group && isNotHandled(err)) return { last, left: entries.slice(i) };
          try {
            this.setup.onError?.(err as Error, message);
          } catch {
            // As in report(): the message counts as handled either way.
          }
        }
      }
      last = entry[0].toString();
    }
    return { last, left: [] };
  }

  protected report(err: unknown): void {
    const cause = err as Error;
    try {
      this.setup.onError?.(new BusError(`redis stream ${this.setup.topic}: ${cause.message}`, { cause }));
    } catch {
      // A failing error callback must not end the loop.
    }
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        this.clientId ??= await this.connectionId();
        await this.readOnce();
        failures = 0;
      } catch (err) {
        if (this.stopped) break;
        this.clientId = undefined;
        this.report(err);
        await this.pause(Math.min(100 * 2 ** failures++, maxRetryDelayMs));
      }
    }
  }

  /**
   * CLIENT ID of the connection the blocking reads run on: on a cluster, the reader's connection to
   * the node that holds the stream (ids are per node).
   */
  private async connectionId(): Promise<number> {
    const node = nodeForKey(this.setup.connection, this.setup.key);
    if (!node) throw new BusError('the redis cluster has not told which node holds the stream yet');
    this.node = `${node.options.host}:${node.options.port}`;
    return (await node.client('ID')) as number;
  }

  /** Backs off, then waits for the connection to be up again (or for close). */
  private async pause(delayMs: number): Promise<void> {
    const { connection } = this.setup;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        connection.off('ready', onReady);
        this.stop.signal.removeEventListener('abort', done);
        resolve();
      };
      const onReady = () => {
        if (timer === undefined) done();
      };
      let timer: NodeJS.Timeout | undefined = setTimeout(() => {
        timer = undefined;
        if (connection.status === 'ready') done();
      }, delayMs);
      connection.on('ready', onReady);
      this.stop.signal.addEventListener('abort', done);
    });
  }

  /**
   * A blocked read returns only when entries arrive or BLOCK runs out. CLIENT UNBLOCK ends it at once
   * with an empty answer, so no entry is lost in a reply nobody reads. It is repeated because it may
   * reach the server just before the read does.
   */
  private async interruptRead(): Promise<void> {
    const { commands, blockMs } = this.setup;
    const deadline = Date.now() + blockMs + 1000;
    let ended = false;
    void this.loop.then(() => (ended = true));
    while (!ended && Date.now() < deadline && commands.status === 'ready') {
      const node = nodeForKey(commands, this.setup.key);
      // On a cluster, only the node the read runs on knows its client id.
      const same = node && `${node.options.host}:${node.options.port}` === this.node;
      if (this.clientId !== undefined && same) await node.client('UNBLOCK', this.clientId).catch(() => {});
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
