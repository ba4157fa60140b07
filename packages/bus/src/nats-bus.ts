/**
 * NATS JetStream adapter. Every topic is a stream of its own (see nats-streams.ts) and a position is
 * the stream sequence number with the stream's epoch (`42.1a2b3c4d`, position-epoch.ts: a digest of
 * the stream's `created` time, which a stream deleted and created again, or lost with a server
 * without its store, gets anew). A `from` of another epoch is refused (reason `epoch`). A broadcast
 * subscriber reads through an ordered consumer that starts right after the stream's last message
 * (or after `from`, or `last` messages before the end; a `from` whose successor the stream no
 * longer holds is refused as expired); a group is one durable pull consumer with explicit acks that
 * every member pulls from, so each message goes to exactly one member, and a member joining later
 * gets what the group has not consumed yet.
 *
 * Subjects outside JetStream (a foreign system publishing on plain core NATS) are read with
 * `subscribe(subject, handler, { core: true })`: a core subscription, a queue group for `group`, no
 * history, and nothing is kept while no one listens. Keeping history for such subjects would take a
 * stream whose `subjects` cover them and a lookup of the stream by subject (`jsm.streams.find`)
 * instead of by derived name; not needed so far.
 */
import {
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  jetstreamManager,
} from '@nats-io/jetstream';
import { type NatsConnection, RequestError } from '@nats-io/transport-node';
import {
  type Bus,
  BusError,
  isNotHandled,
  BusUnavailableError,
  type Message,
  type MessageHandler,
  type OutgoingMessage,
  type Position,
  type PublishOptions,
  PositionUnavailableError,
  type SubscribeOptions,
  type Subscription,
  toBuffer,
} from './bus.ts';
import { connectNats } from './nats-connect.ts';
import type { NatsSecurityOptions } from './nats-security.ts';
import { NatsConnectionState } from './nats-connection-state.ts';
import { ConsumerLoop } from './nats-consumer-loop.ts';
import { fromNatsMessage, toNatsHeaders } from './nats-message.ts';
import { NatsStreams, type StreamExtent, type StreamLimits } from './nats-streams.ts';
import { ReadThrough } from './nats-read-through.ts';
import { assertSameEpoch, type EpochPosition, epochOf, splitEpoch, withEpoch } from './position-epoch.ts';
import { noRouteSubject, routeSubject } from './nats-route-subject.ts';

export interface NatsBusOptions {
  servers: string | string[];
  /** Client name shown on the server's monitoring pages. */
  name?: string;
  /** Limits of the streams this bus creates (default: 24 h, 1,000,000 messages, no byte limit). */
  streamLimits?: Partial<StreamLimits>;
  /** How long publish may take, waiting for a reconnect included, before it rejects (default 5 s). */
  publishTimeoutMs?: number;
  /** Timeout of JetStream API requests: stream and consumer lookups, creation (default 5 s). */
  requestTimeoutMs?: number;
  /** How long ping waits for the server (default 2 s). */
  pingTimeoutMs?: number;
  /** How long a group member may hold a message unacked before it goes to another (default 30 s). */
  ackWaitMs?: number;
  /** Pause between reconnect attempts (default 1 s); the client never stops trying. */
  reconnectWaitMs?: number;
  /** Credentials and TLS (nats-security.ts). */
  security?: NatsSecurityOptions;
}

export interface NatsSubscribeOptions extends SubscribeOptions {
  /** Read a plain core-NATS subject (wildcards allowed) instead of a JetStream topic; no `from`. */
  core?: boolean;
}

const DEFAULT_LIMITS: StreamLimits = { maxAgeMs: 24 * 3600_000, maxMessages: 1_000_000, maxBytes: -1 };
/**
 * Pull requests expire after 10 s (the client's default is 30 s): the client waits that long between
 * checks of a consumer it could not find after a reconnect, so this bounds the pause in recovery.
 */
const BROADCAST_PULL = { max_messages: 100, expires: 10_000 };
/** A message a member could not handle comes again after this pause (no tight loop on one member). */
const NAK_DELAY_MS = 500;
/** How often a subscriber limited to routes asks the server how far its consumer has read. */
const READ_THROUGH_PROBE_MS = 1000;
/** Small batches for groups, so a member does not sit on messages another member could handle. */
const GROUP_PULL = { max_messages: 10, expires: 10_000 };

export class NatsBus implements Bus {
  readonly kind = 'nats';
  readonly capabilities: { replay: boolean; tail: boolean; headers: boolean; routes: number };
  private readonly nc: NatsConnection;
  private readonly js: JetStreamClient;
  private readonly jsm: JetStreamManager;
  private readonly connection: NatsConnectionState;
  private readonly streams: NatsStreams;
  private readonly subscriptions = new Set<Subscription>();
  private readonly publishTimeoutMs: number;
  private readonly requestTimeoutMs: number;
  private readonly pingTimeoutMs: number;
  private readonly ackWaitMs: number;
  private closed = false;

  private constructor(nc: NatsConnection, jsm: JetStreamManager, options: NatsBusOptions) {
    this.nc = nc;
    this.jsm = jsm;
    this.js = jsm.jetstream();
    // A consumer filters by several subjects from server 2.10 on; before, by one.
    this.capabilities = {
      replay: true,
      tail: true,
      headers: true,
      routes: serverAtLeast(nc, 2, 10) ? 1024 : 1,
    };
    this.connection = new NatsConnectionState(nc);
    this.streams = new NatsStreams(jsm, { ...DEFAULT_LIMITS, ...options.streamLimits });
    this.publishTimeoutMs = options.publishTimeoutMs ?? 5000;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 5000;
    this.pingTimeoutMs = options.pingTimeoutMs ?? 2000;
    this.ackWaitMs = options.ackWaitMs ?? 30_000;
  }

  static async connect(options: NatsBusOptions): Promise<NatsBus> {
    const nc = await connectNats({
      ...options.security,
      servers: options.servers,
      name: options.name ?? 'gatehouse',
      maxReconnectAttempts: -1,
      reconnectTimeWait: options.reconnectWaitMs ?? 1000,
    });
    try {
      const jsm = await jetstreamManager(nc, { timeout: options.requestTimeoutMs ?? 5000 });
      return new NatsBus(nc, jsm, options);
    } catch (err) {
      await nc.close();
      throw new BusError(`nats: JetStream unavailable: ${(err as Error).message}`, { cause: err });
    }
  }

  async publish(topic: string, message: OutgoingMessage, options: PublishOptions = {}): Promise<Position> {
    this.assertOpen();
    const deadline = Date.now() + this.publishTimeoutMs;
    const subject = options.route === undefined ? undefined : routeSubject(topic, options.route);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.publishOnce(topic, message, deadline, subject);
      } catch (err) {
        this.streams.forget(topic);
        // A stream deleted behind our back stored nothing: create it again and retry once.
        if (attempt === 1 && isNoStreamListening(err)) continue;
        throw new BusUnavailableError(`nats publish to '${topic}' failed: ${(err as Error).message}`, {
          cause: err,
        });
      }
    }
  }

  async subscribe(
    topic: string,
    handler: MessageHandler,
    options: NatsSubscribeOptions = {},
  ): Promise<Subscription> {
    this.assertOpen();
    await this.connection.whenConnected(Date.now() + this.requestTimeoutMs);
    let sub: Subscription;
    if (options.core) sub = await this.subscribeCore(topic, handler, options);
    else if (options.group !== undefined)
      sub = await this.subscribeGroup(topic, options.group, handler, options);
    else sub = await this.subscribeBroadcast(topic, handler, options);
    return this.track(sub);
  }

  /** Deletes the topic's stream: the next publish creates it anew, in another epoch. */
  async deleteTopic(topic: string): Promise<void> {
    this.assertOpen();
    try {
      await this.streams.delete(topic);
    } catch (err) {
      throw new BusError(`nats delete of '${topic}' failed: ${(err as Error).message}`, { cause: err });
    }
  }

  comparePositions(a: Position, b: Position): number {
    return sequenceOf(parsePosition(a)) - sequenceOf(parsePosition(b));
  }

  positionEpoch(position: Position): string | undefined {
    return parsePosition(position).epoch;
  }

  async ping(): Promise<void> {
    this.assertOpen();
    if (!this.connection.isConnected) throw new BusUnavailableError('nats server unreachable (reconnecting)');
    await withTimeout(this.jsm.getAccountInfo(), this.pingTimeoutMs, 'nats ping');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.subscriptions].map((s) => s.close()));
    // Drain flushes pending acks; it cannot finish while disconnected, so it gets a bound.
    await withTimeout(this.nc.drain(), this.requestTimeoutMs, 'nats drain').catch(() => this.nc.close());
  }

  /** `subject`: the routed subject of the topic it goes on (nats-route-subject.ts), else the topic. */
  private async publishOnce(
    topic: string,
    message: OutgoingMessage,
    deadline: number,
    subject?: string,
  ): Promise<Position> {
    await this.connection.whenConnected(deadline);
    await (subject === undefined ? this.streams.stream(topic) : this.streams.routedStream(topic));
    const epoch = await this.streams.epoch(topic);
    const left = deadline - Date.now();
    if (left <= 0) throw new BusError(`timed out after ${this.publishTimeoutMs} ms`);
    const ack = await this.js.publish(subject ?? topic, toBuffer(message.value), {
      headers: toNatsHeaders(message),
      timeout: left,
    });
    return withEpoch(String(ack.seq), epoch);
  }

  private async subscribeBroadcast(
    topic: string,
    handler: MessageHandler,
    options: SubscribeOptions,
  ): Promise<Subscription> {
    const from = options.from === undefined ? undefined : parsePosition(options.from);
    let next: number | undefined;
    let created: string | undefined;
    /** The epoch of the stream the open consumer reads, which its messages' positions carry. */
    let epoch: string | undefined;
    const at = (sequence: number) => withEpoch(String(sequence), epoch);
    let liveAfter: Position | undefined;
    let origin: Position | undefined;
    // Routes asked for and routes the open consumer reads (counted): messages of a consumer opened
    // before the newest routes are not delivered, and come again from `next` with the new filter.
    let routes = options.routes;
    let asked = 0;
    let reading = 0;
    const readThrough = new ReadThrough();
    const loop = await ConsumerLoop.start(
      {
        open: () =>
          this.opening(topic, async (stream) => {
            if (routes !== undefined) await this.streams.routedStream(topic);
            const opening = asked;
            const extent = await this.streams.extent(stream);
            if (created === undefined) {
              epoch = epochOf(extent.created);
              next = firstSequence(topic, options.from, from, options.last, extent);
              liveAfter = extent.nextSequence > 1 ? at(extent.nextSequence - 1) : undefined;
              origin = at(extent.firstSequence - 1);
            }
            // A stream deleted and created again under the same name is all new to this subscriber.
            if (created !== undefined && extent.created !== created) next = extent.firstSequence;
            created = extent.created;
            epoch = epochOf(created);
            next = Math.min(next ?? extent.nextSequence, extent.nextSequence);
            const consumer = await this.js.consumers.get(stream, {
              deliver_policy: DeliverPolicy.StartSequence,
              opt_start_seq: next,
              ...filterFor(topic, routes, this.capabilities.routes > 1),
            });
            const messages = await consumer.consume(BROADCAST_PULL);
            readThrough.opened(consumer, async () => (await this.streams.extent(stream)).nextSequence - 1);
            reading = opening;
            return messages;
          }),
        handle: async (msg) => {
          if (reading !== asked) return;
          next = msg.seq + 1;
          readThrough.handled(msg);
          await deliver(handler, options.onError, fromNatsMessage(topic, msg, at(msg.seq)));
        },
        release: () => {},
        // After a deleted stream the client resumes only once it finds the consumer missing (slow).
        reopenOn: new Set(['consumer_deleted', 'stream_not_found']),
      },
      options.onError,
    );
    // Limited to routes, `next` follows the server's view of how far the consumer read (it may have
    // passed many messages it did not match since the last one delivered).
    const probe = async () => {
      const probing = asked;
      if (routes === undefined || reading !== probing) return;
      const through = await readThrough.probe().catch(() => undefined);
      if (through !== undefined && asked === probing && reading === probing)
        next = Math.max(next!, through + 1);
    };
    const probes = setInterval(() => void probe(), READ_THROUGH_PROBE_MS);
    probes.unref();
    return {
      liveAfter,
      origin,
      readThrough: () => at(next! - 1),
      route: (wanted) => {
        if (wanted !== undefined && wanted.size > this.capabilities.routes)
          throw new BusError(`a nats consumer filters by at most ${this.capabilities.routes} routes`);
        routes = wanted;
        asked++;
        loop.restart();
        return at(next! - 1);
      },
      close: () => {
        clearInterval(probes);
        return loop.close();
      },
    };
  }

  private async subscribeGroup(
    topic: string,
    group: string,
    handler: MessageHandler,
    options: SubscribeOptions,
  ): Promise<Subscription> {
    if (options.from !== undefined || options.last !== undefined)
      throw new BusError('`from` and `last` are for broadcast subscribers only');
    // The epoch of the stream when the consumer was opened, which its messages' positions carry.
    let epoch: string | undefined;
    return ConsumerLoop.start(
      {
        open: () =>
          this.opening(topic, async (stream) => {
            const durable = await this.streams.groupConsumer(stream, group, this.ackWaitMs);
            epoch = epochOf((await this.streams.extent(stream)).created);
            const consumer = await this.js.consumers.get(stream, durable);
            return consumer.consume(GROUP_PULL);
          }),
        handle: async (msg) => {
          const message = fromNatsMessage(topic, msg, withEpoch(String(msg.seq), epoch));
          const handled = await deliver(handler, options.onError, message, true);
          // A nak hands the message straight back to the group (another member, or this one).
          if (handled) msg.ack();
          else msg.nak(NAK_DELAY_MS);
        },
        release: (msg) => msg.nak(),
        // The client keeps pulling from a durable that is gone but never creates it again.
        reopenOn: new Set(['consumer_not_found', 'consumer_deleted', 'stream_not_found']),
      },
      options.onError,
    );
  }

  /** Core NATS keeps no history: positions only count this subscription's messages. */
  private async subscribeCore(
    subject: string,
    handler: MessageHandler,
    options: SubscribeOptions,
  ): Promise<Subscription> {
    if (options.from !== undefined || options.last !== undefined)
      throw new BusError('core NATS subjects have no history to replay');
    const sub = this.nc.subscribe(subject, options.group === undefined ? {} : { queue: options.group });
    await withTimeout(this.nc.flush(), this.requestTimeoutMs, 'nats subscribe');
    let received = 0;
    const done = (async () => {
      for await (const msg of sub) {
        await deliver(handler, options.onError, fromNatsMessage(msg.subject, msg, String(++received)));
      }
    })();
    return {
      close: async () => {
        sub.unsubscribe();
        await done;
      },
    };
  }

  /** Runs `open` on the topic's stream; a failure may mean the stream is gone, so look it up anew. */
  private async opening<T>(topic: string, open: (stream: string) => Promise<T>): Promise<T> {
    try {
      return await open(await this.streams.stream(topic));
    } catch (err) {
      this.streams.forget(topic);
      throw err;
    }
  }

  private track(sub: Subscription): Subscription {
    this.subscriptions.add(sub);
    return {
      liveAfter: sub.liveAfter,
      origin: sub.origin,
      ...(sub.route && { route: sub.route }),
      ...(sub.readThrough && { readThrough: sub.readThrough }),
      close: async () => {
        this.subscriptions.delete(sub);
        await sub.close();
      },
    };
  }

  private assertOpen(): void {
    if (this.closed) throw new BusError('nats bus is closed');
  }
}

/** False when a group member's handler threw NotHandledError (the message must come again). */
async function deliver(
  handler: MessageHandler,
  onError: SubscribeOptions['onError'],
  message: Message,
  group = false,
): Promise<boolean> {
  try {
    await handler(message);
  } catch (err) {
    if (group && isNotHandled(err)) return false;
    try {
      onError?.(err as Error, message);
    } catch {
      // The subscription goes on whatever the error callback does.
    }
  }
  return true;
}

/**
 * The filter of a consumer limited to `routes`: their subjects, and the topic's own (messages
 * published without a route) where the server filters by several (`several`). None (read
 * everything) without routes, or when one is too long to have a subject: its messages go unrouted.
 */
function filterFor(
  topic: string,
  routes: ReadonlySet<string> | undefined,
  several: boolean,
): { filter_subjects?: string[] | string } {
  if (routes === undefined) return {};
  const subjects: string[] = several ? [topic] : [];
  for (const route of routes) {
    const subject = routeSubject(topic, route);
    if (subject === undefined) return {};
    subjects.push(subject);
  }
  // One subject goes as the single filter servers before 2.10 know.
  if (subjects.length === 0) return { filter_subjects: noRouteSubject(topic) };
  return { filter_subjects: subjects.length === 1 ? subjects[0]! : subjects };
}

function serverAtLeast(nc: NatsConnection, major: number, minor: number): boolean {
  const [a = 0, b = 0] = (nc.info?.version ?? '0.0').split('.').map(Number);
  return a > major || (a === major && b >= minor);
}

/** No stream took the subject: the server stored nothing. */
function isNoStreamListening(err: unknown): boolean {
  return err instanceof Error && err.cause instanceof RequestError && err.cause.isNoResponders();
}

function parsePosition(position: Position): EpochPosition {
  return splitEpoch(position, /^\d{1,15}$/, 'nats stream sequence');
}

function sequenceOf(position: EpochPosition): number {
  return Number(position.place);
}

/**
 * The first sequence a new broadcast subscriber reads: the stream's next one (live only), the one
 * after `from`, or `last` before the end. A `from` of another incarnation of the stream (epoch),
 * whose successor the stream no longer holds (limits, a purge) or that lies beyond the end is refused.
 */
function firstSequence(
  topic: string,
  position: Position | undefined,
  parsed: EpochPosition | undefined,
  last: number | undefined,
  extent: StreamExtent,
): number {
  if (parsed !== undefined) {
    assertSameEpoch(position!, parsed, epochOf(extent.created), topic);
    const from = sequenceOf(parsed);
    if (from + 1 < extent.firstSequence)
      throw new PositionUnavailableError(
        position!,
        'expired',
        `the stream starts at ${extent.firstSequence}`,
      );
    if (from + 1 > extent.nextSequence)
      throw new PositionUnavailableError(
        position!,
        'unknown',
        `the stream ends at ${extent.nextSequence - 1}`,
      );
    return from + 1;
  }
  if (last !== undefined) return Math.max(extent.firstSequence, extent.nextSequence - last);
  return extent.nextSequence;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BusUnavailableError(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
