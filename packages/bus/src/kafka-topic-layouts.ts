/**
 * The partitions of each topic the Kafka adapter publishes to, read once from the cluster and kept
 * until they may be stale: after a failed send, when the producer itself refreshed its metadata
 * (kafkajs does so when the broker reports stale metadata) or after `maxAgeMs`, like kafkajs'
 * own `metadataMaxAge`, so partitions added to a topic are used about as soon as kafkajs used them.
 */

export interface TopicLayout {
  /** Number of partitions: keyed messages are spread over all of them. */
  partitionCount: number;
  /** Partitions that have a leader now: keyless messages go round-robin over these. */
  available: number[];
}

export interface KafkaTopicLayoutsOptions {
  /** A metadata request for one topic; undefined when the cluster has no such topic (yet). */
  fetch(topic: string): Promise<TopicLayout | undefined>;
  /** Default 5 minutes (kafkajs' `metadataMaxAge`). */
  maxAgeMs?: number;
  now?: () => number;
}

interface Entry {
  layout: Promise<TopicLayout | undefined>;
  expiresAt: number;
}

export class KafkaTopicLayouts {
  private readonly entries = new Map<string, Entry>();
  private readonly fetch: (topic: string) => Promise<TopicLayout | undefined>;
  private readonly maxAgeMs: number;
  private readonly now: () => number;

  constructor(options: KafkaTopicLayoutsOptions) {
    this.fetch = options.fetch;
    this.maxAgeMs = options.maxAgeMs ?? 300_000;
    this.now = options.now ?? Date.now;
  }

  /** Callers asking while a fetch is under way share it; a failed fetch or a missing topic is not kept. */
  get(topic: string): Promise<TopicLayout | undefined> {
    const now = this.now();
    const cached = this.entries.get(topic);
    if (cached && cached.expiresAt > now) return cached.layout;
    const entry: Entry = { layout: this.fetch(topic), expiresAt: now + this.maxAgeMs };
    this.entries.set(topic, entry);
    const drop = () => {
      if (this.entries.get(topic) === entry) this.entries.delete(topic);
    };
    entry.layout.then((layout) => layout ?? drop(), drop);
    return entry.layout;
  }

  invalidate(topic: string): void {
    this.entries.delete(topic);
  }

  invalidateAll(): void {
    this.entries.clear();
  }
}

/** The layout of a topic from kafkajs' metadata (`admin.fetchTopicMetadata`). */
export function topicLayout(
  topic: string,
  partitions: { partitionId: number; leader: number }[],
): TopicLayout {
  if (partitions.length === 0) throw new Error(`topic ${topic} has no partitions`);
  return {
    partitionCount: partitions.length,
    available: partitions
      .filter((p) => p.leader >= 0)
      .map((p) => p.partitionId)
      .sort((a, b) => a - b),
  };
}
