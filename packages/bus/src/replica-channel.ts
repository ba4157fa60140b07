/**
 * Requests addressed to one replica (the hub holding a connection, the proxy holding a request) over
 * the control bus: each replica listens on `<prefix><its id>`; a request carries the asker's id so
 * the answer comes back on the asker's topic. An unanswered request resolves undefined after the
 * time-out (replica gone).
 *
 * The replica ids come from connection tokens and correlation ids, that is from the public edge,
 * so no request may make a topic (a Redis stream key) for a replica that is not there:
 * - only a replica live in the registry (replica-registry.ts, in the shared store) is sent
 *   requests; any other is answered "gone" at once, without touching the bus;
 * - requests and replies are published only to a topic that exists (Redis NOMKSTREAM), so one that
 *   races with its replica's leaving is dropped instead of making the stream again;
 * - each topic keeps about `maxLength` messages (they are stale after the request time-out);
 * - a replica deletes its topic when it stops, and a live one deletes the topics of replicas that
 *   died without stopping, once their registry entry has expired.
 *
 * `gather` asks every live replica at once (scatter-gather) and answers at the time-out at the
 * latest, with the answers it has and the replicas that stayed silent: a replica that hangs (stopped,
 * overloaded, cut off from the bus) makes the answer partial, never late.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '@gatehouse/service-kit';
import type { Store } from '@gatehouse/store';
import { type Bus, BusUnavailableError, type Subscription, TopicMissingError } from './bus.ts';
import { ReplicaRegistry } from './replica-registry.ts';

interface Envelope {
  kind: 'request' | 'reply';
  id: string;
  from: string;
  body: unknown;
}

export type RequestHandler = (body: unknown) => Promise<unknown> | unknown;

/** What `gather` collected: each answering replica's reply, and the live replicas that did not answer. */
export interface Gathered {
  answers: Map<string, unknown>;
  missing: string[];
}

export interface ReplicaChannelOptions {
  bus: Bus;
  /** This replica's id. */
  replica: string;
  logger: Logger;
  /** Holds the registry of live replicas; shared by every replica of the channel. */
  store: Store;
  /** Topic prefix of the channel (default `gw.control.`). */
  prefix?: string;
  /** A replica not heard from for this long is taken for dead (default 15 s). */
  registryTtlSeconds?: number;
  /** Messages kept per replica's topic, approximately (default 1000). */
  maxLength?: number;
  /**
   * A replica died without leaving (its registry entry expired) and this one reaped what it left:
   * called on exactly one live replica per dead one.
   */
  onGone?: (replica: string) => void;
}

export class ReplicaChannel {
  private readonly pending = new Map<string, (body: unknown) => void>();
  private subscription: Subscription | undefined;
  private handle: RequestHandler | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private beating: Promise<void> = Promise.resolve();
  private readonly bus: Bus;
  private readonly replica: string;
  private readonly prefix: string;
  private readonly logger: Logger;
  private readonly registry: ReplicaRegistry;
  private readonly maxLength: number;
  private readonly onGone: ((replica: string) => void) | undefined;

  constructor(options: ReplicaChannelOptions) {
    this.bus = options.bus;
    this.replica = options.replica;
    this.logger = options.logger;
    this.prefix = options.prefix ?? 'gw.control.';
    this.maxLength = options.maxLength ?? 1000;
    this.onGone = options.onGone;
    this.registry = new ReplicaRegistry({
      store: options.store,
      channel: this.prefix,
      ttlSeconds: options.registryTtlSeconds ?? 15,
    });
  }

  /** Joins the registry, makes this replica's topic and listens on it; then beats every third of the TTL. */
  async start(handle: RequestHandler): Promise<void> {
    this.handle = handle;
    await this.join();
    this.subscription = await this.bus.subscribe(
      this.topic(this.replica),
      async (m) => {
        const env = JSON.parse(m.value.toString()) as Envelope;
        if (env.kind === 'reply') {
          this.pending.get(env.id)?.(env.body);
          return;
        }
        const body = await handle(env.body);
        const reply: Envelope = { kind: 'reply', id: env.id, from: this.replica, body };
        try {
          await this.send(env.from, reply);
        } catch (err) {
          // The asker left meanwhile: its answer has nowhere to go.
          if (!(err instanceof TopicMissingError)) throw err;
        }
      },
      { onError: (err) => this.logger.warn({ err }, 'control message failed') },
    );
    const everyMs = (this.registry.ttlSeconds * 1000) / 3;
    this.heartbeat = setInterval(() => {
      this.beating = this.beat();
    }, everyMs);
    this.heartbeat.unref();
  }

  /**
   * Resolves with the reply, or undefined when the replica is not live or no reply came in time
   * (the replica is gone). Rejects when the store or the bus could not take the request: at once
   * on a failed look-up or publish, and at the time-out while the publish is still unanswered (a
   * broker that hangs is as unreachable as one that refuses).
   */
  async request(replica: string, body: unknown, timeoutMs: number): Promise<unknown> {
    if (replica !== this.replica && !(await this.registry.isLive(replica))) return undefined;
    const id = randomUUID();
    const env: Envelope = { kind: 'request', id, from: this.replica, body };
    let published = false;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        if (published) resolve(undefined);
        else reject(new BusUnavailableError(`the control bus did not take a request within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, (reply) => {
        clearTimeout(timer);
        this.pending.delete(id);
        resolve(reply);
      });
      this.send(replica, env).then(
        () => {
          published = true;
        },
        (err) => {
          clearTimeout(timer);
          this.pending.delete(id);
          // Its topic went away after the look-up: it left.
          if (err instanceof TopicMissingError) resolve(undefined);
          else reject(err);
        },
      );
    });
  }

  /**
   * Sends `body` to every live replica that `ask` accepts (all by default), this one included, and
   * resolves once all have answered or `timeoutMs` has passed, whichever comes first. This replica's
   * own part is answered in-process, without the bus. A replica whose answer is missing at the
   * time-out (or that left meanwhile) is named in `missing`. Rejects as `request` does when the
   * store or the bus cannot take the request: a partial answer means silent replicas, never our own
   * outage.
   */
  async gather(
    body: unknown,
    timeoutMs: number,
    ask: (replica: string) => boolean = () => true,
  ): Promise<Gathered> {
    const deadline = Date.now() + timeoutMs;
    const replicas = (await this.registry.live()).filter(ask);
    if (ask(this.replica) && !replicas.includes(this.replica)) replicas.push(this.replica);
    const replies = await Promise.all(
      replicas.map((replica) =>
        replica === this.replica
          ? this.answerOwn(body, deadline)
          : this.request(replica, body, Math.max(1, deadline - Date.now())),
      ),
    );
    const answers = new Map<string, unknown>();
    const missing: string[] = [];
    replicas.forEach((replica, i) => {
      if (replies[i] === undefined) missing.push(replica);
      else answers.set(replica, replies[i]);
    });
    return { answers, missing: missing.sort() };
  }

  /** The replicas live in the registry now (this one among them once started). */
  live(): Promise<string[]> {
    return this.registry.live();
  }

  /** Leaves the registry, then deletes this replica's topic (a live replica does it later if this fails). */
  async close(): Promise<void> {
    clearInterval(this.heartbeat);
    await this.beating;
    const subscription = this.subscription;
    this.subscription = undefined;
    if (!subscription) return;
    await subscription.close();
    try {
      await this.registry.leave(this.replica);
      await this.bus.deleteTopic?.(this.topic(this.replica));
      await this.registry.forget(this.replica);
    } catch (err) {
      this.logger.warn({ err }, 'could not remove this replica from the control channel; a live one will');
    }
  }

  /** This replica's own part of a gather, bounded by the same deadline as the others'. */
  private async answerOwn(body: unknown, deadline: number): Promise<unknown> {
    if (!this.handle) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), Math.max(0, deadline - Date.now()));
    });
    try {
      return await Promise.race([Promise.resolve(this.handle(body)), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async join(): Promise<void> {
    await this.registry.join(this.replica);
    await this.bus.createTopic?.(this.topic(this.replica));
  }

  /** Stays live (joining again after being taken for dead) and deletes what dead replicas left. */
  private async beat(): Promise<void> {
    try {
      await this.join();
      for (const dead of await this.registry.dead()) {
        // Looked at again just before: it may have come back since the listing.
        if (await this.registry.isLive(dead)) continue;
        await this.bus.deleteTopic?.(this.topic(dead));
        if (!(await this.registry.forget(dead))) continue;
        this.logger.info({ replica: dead }, 'deleted the control topic of a replica that is gone');
        this.onGone?.(dead);
      }
    } catch (err) {
      this.logger.warn({ err }, 'control channel heartbeat failed');
    }
  }

  private send(replica: string, env: Envelope): Promise<unknown> {
    return this.bus.publish(
      this.topic(replica),
      { value: JSON.stringify(env) },
      { onlyIfTopicExists: true, maxLength: this.maxLength },
    );
  }

  private topic(replica: string): string {
    return this.prefix + replica;
  }
}
