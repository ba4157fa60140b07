/**
 * In-process bus for the embedded runner and unit tests. Each topic keeps a bounded history so that
 * replay works like on the real streams; positions are sequence numbers starting at 1, with the
 * epoch of the topic's incarnation (`7.1a2b3c4d`, position-epoch.ts): a topic deleted, or a process
 * restarted, starts its sequence over, so a position of the old one must not name a place in the new.
 */
import {
  type Bus,
  BusError,
  isNotHandled,
  type Message,
  type MessageHandler,
  type OutgoingMessage,
  type Position,
  PositionUnavailableError,
  type PublishOptions,
  type SubscribeOptions,
  type Subscription,
  TopicMissingError,
  toBuffer,
} from './bus.ts';
import { assertSameEpoch, newEpoch, splitEpoch, withEpoch } from './position-epoch.ts';

export interface MemoryBusOptions {
  /** Messages kept per topic for replay (oldest dropped first). */
  retention?: number;
  /** Bytes of messages (values, keys, headers) kept per topic; the newest is always kept. */
  retentionBytes?: number;
}

/** 64 MiB per topic: the hub's own event buffer holds as much of the fan-out stream. */
export const DEFAULT_MEMORY_BUS_RETENTION_BYTES = 64 * 1024 * 1024;

interface Subscriber {
  handler: MessageHandler;
  onError: ((err: Error, message?: Message) => void) | undefined;
  /** Deliveries run one after another per subscriber, so a slow async handler keeps order. */
  queue: Promise<void>;
}

/** A consumer group remembers how far it got, so messages published while it has no member wait. */
interface Group {
  members: Subscriber[];
  nextSeq: number;
  /** Messages a member did not handle (NotHandledError) while no other member was there. */
  returned: Message[];
}

/** Pause before a message a member did not handle goes to the group again. */
const REDELIVERY_DELAY_MS = 50;

interface Topic {
  /** This incarnation of the topic: a new one per bus instance and per topic made anew. */
  epoch: string;
  history: Message[];
  /** Bytes of the messages in `history` (messageBytes). */
  bytes: number;
  nextSeq: number;
  broadcast: Set<Subscriber>;
  groups: Map<string, Group>;
}

export class MemoryBus implements Bus {
  readonly kind = 'memory';
  readonly capabilities = { replay: true, tail: true, headers: true };
  private readonly topics = new Map<string, Topic>();
  private readonly retention: number;
  private readonly retentionBytes: number;
  private closed = false;

  constructor(options: MemoryBusOptions = {}) {
    this.retention = options.retention ?? 10_000;
    this.retentionBytes = options.retentionBytes ?? DEFAULT_MEMORY_BUS_RETENTION_BYTES;
  }

  async publish(topicName: string, out: OutgoingMessage, options: PublishOptions = {}): Promise<Position> {
    if (this.closed) throw new BusError('memory bus is closed');
    if (options.onlyIfTopicExists && !this.topics.has(topicName)) throw new TopicMissingError(topicName);
    const topic = this.topic(topicName);
    const message: Message = {
      topic: topicName,
      key: out.key,
      value: toBuffer(out.value),
      headers: { ...out.headers },
      position: withEpoch(String(topic.nextSeq++), topic.epoch),
    };
    topic.history.push(message);
    topic.bytes += messageBytes(message);
    const keep = Math.min(options.maxLength ?? this.retention, this.retention);
    while (topic.history.length > keep || (topic.bytes > this.retentionBytes && topic.history.length > 1))
      topic.bytes -= messageBytes(topic.history.shift()!);
    for (const sub of topic.broadcast) deliver(sub, message);
    for (const group of topic.groups.values()) {
      if (group.members.length === 0) continue;
      this.deliverToGroup(group, message);
      group.nextSeq = topic.nextSeq;
    }
    return message.position;
  }

  async subscribe(
    topicName: string,
    handler: MessageHandler,
    options: SubscribeOptions = {},
  ): Promise<Subscription> {
    if (this.closed) throw new BusError('memory bus is closed');
    const topic = this.topic(topicName);
    const sub: Subscriber = { handler, onError: options.onError, queue: Promise.resolve() };
    if (options.group !== undefined) {
      if (options.from !== undefined || options.last !== undefined)
        throw new BusError('`from` and `last` are for broadcast subscribers only');
      let group = topic.groups.get(options.group);
      if (!group) {
        group = { members: [], nextSeq: topic.nextSeq, returned: [] };
        topic.groups.set(options.group, group);
      }
      const { members } = group;
      if (members.length === 0) {
        for (const m of group.returned.splice(0)) this.deliverToMember(group, sub, m);
        for (const m of topic.history) if (seqOf(m) >= group.nextSeq) this.deliverToMember(group, sub, m);
        group.nextSeq = topic.nextSeq;
      }
      members.push(sub);
      return {
        close: async () => {
          members.splice(members.indexOf(sub) >>> 0, 1);
          await sub.queue;
        },
      };
    }
    const newest = topic.nextSeq - 1;
    let backlog: Message[] = [];
    if (options.from !== undefined) backlog = replayAfter(topicName, topic, options.from);
    else if (options.last !== undefined)
      backlog = topic.history.slice(Math.max(0, topic.history.length - options.last));
    for (const m of backlog) deliver(sub, m);
    topic.broadcast.add(sub);
    return {
      liveAfter: newest > 0 ? withEpoch(String(newest), topic.epoch) : undefined,
      origin: withEpoch(
        String((topic.history.length > 0 ? seqOf(topic.history[0]!) : topic.nextSeq) - 1),
        topic.epoch,
      ),
      close: async () => {
        topic.broadcast.delete(sub);
        await sub.queue;
      },
    };
  }

  async createTopic(topicName: string): Promise<void> {
    if (this.closed) throw new BusError('memory bus is closed');
    this.topic(topicName);
  }

  /** Forgets the topic; its subscribers hear nothing more, as on a Redis stream deleted under them. */
  async deleteTopic(topicName: string): Promise<void> {
    if (this.closed) throw new BusError('memory bus is closed');
    this.topics.delete(topicName);
  }

  /** Drops every message of the topic up to and including `through`, as retention would. */
  trim(topicName: string, through: Position): void {
    const after = parsePosition(through).seq;
    const topic = this.topic(topicName);
    while (topic.history.length > 0 && seqOf(topic.history[0]!) <= after)
      topic.bytes -= messageBytes(topic.history.shift()!);
  }

  comparePositions(a: Position, b: Position): number {
    return parsePosition(a).seq - parsePosition(b).seq;
  }

  positionEpoch(position: Position): string | undefined {
    return parsePosition(position).epoch;
  }

  async ping(): Promise<void> {
    if (this.closed) throw new BusError('memory bus is closed');
  }

  async close(): Promise<void> {
    this.closed = true;
    this.topics.clear();
  }

  /** Same key → same member, like a partition; keyless messages spread by sequence. */
  private deliverToGroup(group: Group, message: Message): void {
    const { members } = group;
    if (members.length === 0) group.returned.push(message);
    else this.deliverToMember(group, members[memberIndex(message, members.length)]!, message);
  }

  /** A message the member did not handle goes to the group again, after a pause. */
  private deliverToMember(group: Group, sub: Subscriber, message: Message): void {
    deliver(sub, message, () => {
      setTimeout(() => {
        if (!this.closed) this.deliverToGroup(group, message);
      }, REDELIVERY_DELAY_MS).unref();
    });
  }

  private topic(name: string): Topic {
    let t = this.topics.get(name);
    if (!t) {
      t = { epoch: newEpoch(), history: [], bytes: 0, nextSeq: 1, broadcast: new Set(), groups: new Map() };
      this.topics.set(name, t);
    }
    return t;
  }
}

/** With `notHandled` (group members), a NotHandledError goes there instead of to onError. */
function deliver(sub: Subscriber, message: Message, notHandled?: () => void): void {
  sub.queue = sub.queue.then(async () => {
    try {
      await sub.handler(message);
    } catch (err) {
      if (notHandled && isNotHandled(err)) notHandled();
      else sub.onError?.(err as Error, message);
    }
  });
}

function memberIndex(message: Message, members: number): number {
  if (members === 0) return -1;
  const basis = message.key ?? message.position;
  let h = 0;
  for (let i = 0; i < basis.length; i++) h = (h * 31 + basis.charCodeAt(i)) | 0;
  return Math.abs(h) % members;
}

/**
 * The retained messages after `from`; rejects a position of another incarnation of the topic, older
 * than the history or past its end.
 */
function replayAfter(name: string, topic: Topic, from: Position): Message[] {
  const parsed = parsePosition(from);
  assertSameEpoch(from, parsed, topic.epoch, name);
  const after = parsed.seq;
  if (after >= topic.nextSeq)
    throw new PositionUnavailableError(from, 'unknown', 'beyond the end of the topic');
  const oldest = topic.history.length > 0 ? seqOf(topic.history[0]!) : topic.nextSeq;
  if (after + 1 < oldest)
    throw new PositionUnavailableError(from, 'expired', `the oldest message kept is ${oldest}`);
  return topic.history.filter((m) => seqOf(m) > after);
}

/** What a kept message weighs: its value, key and headers (the object around them is not counted). */
function messageBytes(m: Message): number {
  let bytes = m.value.length + (m.key === undefined ? 0 : Buffer.byteLength(m.key));
  for (const [name, value] of Object.entries(m.headers)) bytes += name.length + String(value).length;
  return bytes;
}

function parsePosition(p: Position): { seq: number; epoch: string | undefined } {
  const { place, epoch } = splitEpoch(p, /^\d{1,15}$/, 'memory bus position');
  return { seq: Number(place), epoch };
}

/** A kept message's sequence number (its position is well-formed: this bus made it). */
function seqOf(m: Message): number {
  return Number.parseInt(m.position, 10);
}
