/**
 * The JetStream side of bus topics: one stream per topic (subject = topic, file storage), created on
 * first use, and one durable consumer per consumer group on it. Streams and consumers that already
 * exist keep their configuration, so operators can tune limits on the server.
 */
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { BusError } from './bus.ts';
import { routedSubjects } from './nats-route-subject.ts';
import { epochOf } from './position-epoch.ts';

/** Limits of the streams this bus creates; NATS conventions: 0 age and -1 counts mean unlimited. */
export interface StreamLimits {
  maxAgeMs: number;
  maxMessages: number;
  maxBytes: number;
}

export interface StreamExtent {
  created: string;
  /** Oldest message still stored. */
  firstSequence: number;
  /** Sequence the next message stored will get. */
  nextSequence: number;
}

/** Characters NATS does not allow in stream and consumer names (they become file names). */
const FORBIDDEN_IN_NAME = /[^\x21-\x7e]|[.*>/\\]/g;

export function streamNameFor(topic: string): string {
  return topic.replace(FORBIDDEN_IN_NAME, '_');
}

export function durableNameFor(group: string): string {
  return group.replace(FORBIDDEN_IN_NAME, '_');
}

/** A topic is published to as-is, so it must be a literal subject: no wildcards, no empty tokens. */
export function assertPublishableSubject(topic: string): void {
  const tokens = topic.split('.');
  if (/\s/.test(topic) || tokens.some((t) => t === '' || t === '*' || t === '>')) {
    throw new BusError(`'${topic}' is not a valid NATS subject for a topic`);
  }
}

export class NatsStreams {
  private readonly jsm: JetStreamManager;
  private readonly limits: StreamLimits;
  /** Topic → stream name, once the stream is known to exist (a failed lookup is not kept). */
  private readonly known = new Map<string, Promise<string>>();
  /** Topics whose stream is known to hold their routed subjects too. */
  private readonly routed = new Map<string, Promise<string>>();
  /** Topic → its stream's epoch when it was looked up (epochOf its `created`). */
  private readonly epochs = new Map<string, string>();

  constructor(jsm: JetStreamManager, limits: StreamLimits) {
    this.jsm = jsm;
    this.limits = limits;
  }

  /** Name of the stream holding `topic`, created with the configured limits when missing. */
  stream(topic: string): Promise<string> {
    let name = this.known.get(topic);
    if (!name) {
      name = this.lookUpOrCreate(topic);
      this.known.set(topic, name);
      name.catch(() => this.forget(topic));
    }
    return name;
  }

  /**
   * As `stream`, and the stream holds the topic's routed subjects (nats-route-subject.ts): added to
   * a stream made before routing was used on it (the only change made to an existing stream).
   */
  routedStream(topic: string): Promise<string> {
    let name = this.routed.get(topic);
    if (!name) {
      name = this.stream(topic).then((stream) => this.addRoutedSubjects(stream, topic));
      this.routed.set(topic, name);
      name.catch(() => this.forget(topic));
    }
    return name;
  }

  /**
   * The epoch of the topic's stream as it was looked up (and is known to exist), for the positions
   * publish answers: a stream deleted under this process is looked up again after the publish that
   * fails on it; one deleted and made again by another process in between is not noticed here.
   */
  async epoch(topic: string): Promise<string | undefined> {
    await this.stream(topic);
    return this.epochs.get(topic);
  }

  /** Deletes the topic's stream and every message in it; a stream that does not exist is no error. */
  async delete(topic: string): Promise<void> {
    this.forget(topic);
    try {
      await this.jsm.streams.delete(streamNameFor(topic));
    } catch (err) {
      if (!isApiError(err, JetStreamApiCodes.StreamNotFound)) throw err;
    } finally {
      this.forget(topic);
    }
  }

  /** Called after a failure that may mean the stream is gone, so the next use checks again. */
  forget(topic: string): void {
    this.known.delete(topic);
    this.routed.delete(topic);
    this.epochs.delete(topic);
  }

  private async addRoutedSubjects(stream: string, topic: string): Promise<string> {
    const { config } = await this.jsm.streams.info(stream);
    const wildcard = routedSubjects(topic);
    if (!config.subjects.includes(wildcard))
      await this.jsm.streams.update(stream, { subjects: [...config.subjects, wildcard] });
    return stream;
  }

  /** Where the stream stands; `created` tells a stream deleted and created again from the old one. */
  async extent(stream: string): Promise<StreamExtent> {
    const { created, state } = await this.jsm.streams.info(stream);
    return { created, firstSequence: Math.max(1, state.first_seq), nextSequence: state.last_seq + 1 };
  }

  /**
   * The group's durable consumer, created when missing. It starts with the messages stored after its
   * creation and then remembers (acks) how far the group got, whoever of its members is connected.
   */
  async groupConsumer(stream: string, group: string, ackWaitMs: number): Promise<string> {
    const durable = durableNameFor(group);
    try {
      await this.jsm.consumers.info(stream, durable);
      return durable;
    } catch (err) {
      if (!isApiError(err, JetStreamApiCodes.ConsumerNotFound)) throw err;
    }
    try {
      await this.jsm.consumers.add(stream, {
        durable_name: durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.New,
        ack_wait: nanos(ackWaitMs),
      });
    } catch (err) {
      // Another member may have created it a moment ago; that one is just as good.
      await this.jsm.consumers.info(stream, durable).catch(() => {
        throw err;
      });
    }
    return durable;
  }

  private async lookUpOrCreate(topic: string): Promise<string> {
    assertPublishableSubject(topic);
    const name = streamNameFor(topic);
    try {
      const info = await this.jsm.streams.info(name);
      if (!info.config.subjects.includes(topic)) {
        throw new BusError(
          `nats stream '${name}' holds subjects [${info.config.subjects.join(', ')}], not topic '${topic}'`,
        );
      }
      this.epochs.set(topic, epochOf(info.created));
      return name;
    } catch (err) {
      if (!isApiError(err, JetStreamApiCodes.StreamNotFound)) throw err;
    }
    // Two processes creating the same stream at once is fine: an identical add is accepted.
    const made = await this.jsm.streams.add({
      name,
      subjects: [topic],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      discard: DiscardPolicy.Old,
      max_age: nanos(this.limits.maxAgeMs),
      max_msgs: this.limits.maxMessages,
      max_bytes: this.limits.maxBytes,
      num_replicas: 1,
    });
    this.epochs.set(topic, epochOf(made.created));
    return name;
  }
}

export function isApiError(err: unknown, code: number): boolean {
  return err instanceof JetStreamApiError && err.code === code;
}
