/**
 * The Kafka side of the flow adapters: one kafkajs client (KAFKA_BROKERS and the project's Kafka
 * security settings), a consumer per binding, one producer for dead letters, and a timer
 * (kafka.flow.metadata.refresh.ms) that matches topic patterns again — kafkajs resolves a pattern
 * only when it subscribes, so a topic created later joins its binding at the next tick (a literal
 * topic that does not exist yet too) — and reads each binding's consumer lag for /metrics.
 */
import { busConfig, kafkaSecurityOptions } from '@gatehouse/bus';
import { ConfigError, loadConfig } from '@gatehouse/service-kit';
import { type Admin, Kafka, logLevel, type Producer } from 'kafkajs';
import type { KafkaBinding } from './binding.ts';
import { KafkaBindingConsumer, type KafkaBindingContext } from './kafka-binding-consumer.ts';
import type { RecordRunContext } from './record-run.ts';

export interface KafkaAdapterSettings {
  refreshMs: number;
  maxPatternTopics: number;
  dlqTimeoutMs: number;
  sessionTimeoutMs: number;
}

export class KafkaFlowAdapter {
  private readonly kafka: Kafka;
  private readonly admin: Admin;
  private readonly consumers: KafkaBindingConsumer[];
  private readonly settings: KafkaAdapterSettings;
  private readonly ctx: RecordRunContext;
  private producerReady: Promise<Producer> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;

  constructor(
    bindings: readonly KafkaBinding[],
    env: NodeJS.ProcessEnv,
    ctx: RecordRunContext,
    settings: KafkaAdapterSettings,
  ) {
    this.kafka = kafkaClient(env, ctx);
    this.admin = this.kafka.admin();
    this.settings = settings;
    this.ctx = ctx;
    const bindingCtx: KafkaBindingContext = {
      ...ctx,
      kafka: this.kafka,
      producer: () => this.producer(),
      dlqTimeoutMs: settings.dlqTimeoutMs,
      sessionTimeoutMs: settings.sessionTimeoutMs,
    };
    this.consumers = bindings.map((b) => new KafkaBindingConsumer(b, bindingCtx));
  }

  get ready(): boolean {
    return this.consumers.every((c) => c.ready);
  }

  async start(): Promise<void> {
    await this.admin.connect();
    const all = await this.admin.listTopics();
    await Promise.all(this.consumers.map((c) => c.read(this.topicsOf(c.binding, all))));
    this.timer = setInterval(() => {
      this.refreshing ??= this.refresh().finally(() => {
        this.refreshing = undefined;
      });
    }, this.settings.refreshMs);
    this.timer.unref();
  }

  async stop(graceMs: number): Promise<void> {
    clearInterval(this.timer);
    await this.refreshing;
    await Promise.all(this.consumers.map((c) => c.shutdown(graceMs)));
    const producer = this.producerReady;
    this.producerReady = undefined;
    await Promise.allSettled([producer?.then((p) => p.disconnect()), this.admin.disconnect()]);
  }

  /** New pattern matches join their binding; lag is read for every binding. */
  private async refresh(): Promise<void> {
    try {
      // Patterns, and literal topics that did not exist yet.
      const waiting = this.consumers.filter((c) => c.binding.pattern || c.topics.length === 0);
      if (waiting.length > 0) {
        const all = await this.admin.listTopics();
        for (const c of waiting) await c.read(this.topicsOf(c.binding, all));
      }
      for (const c of this.consumers) await this.readLag(c);
    } catch (err) {
      this.ctx.logger.warn(
        { err },
        'flow adapter: Kafka metadata refresh failed; trying again at the next tick',
      );
    }
  }

  private topicsOf(binding: KafkaBinding, all: readonly string[]): string[] {
    if (binding.topic !== undefined) {
      if (all.includes(binding.topic)) return [binding.topic];
      // Topics are provisioned, not made by a consumer: the binding starts reading once it exists.
      this.ctx.logger.warn(
        { binding: binding.label },
        'flow adapter: topic not found yet; looking again at each refresh',
      );
      return [];
    }
    const matches = all.filter((t) => binding.pattern!.test(t)).sort();
    const most = this.settings.maxPatternTopics;
    if (matches.length > most)
      this.ctx.logger.warn(
        { binding: binding.label, matches: matches.length, most },
        'flow adapter: more topics match than kafka.flow.pattern.max-topics; the rest are not read',
      );
    return matches.slice(0, most);
  }

  private async readLag(c: KafkaBindingConsumer): Promise<void> {
    const { binding } = c;
    if (c.topics.length === 0) return;
    const committed = await this.admin.fetchOffsets({ groupId: binding.group, topics: [...c.topics] });
    for (const { topic, partitions } of committed) {
      const ends = await this.admin.fetchTopicOffsets(topic);
      for (const end of ends) {
        if (binding.partition !== undefined && end.partition !== binding.partition) continue;
        const done = Number(partitions.find((p) => p.partition === end.partition)?.offset ?? -1);
        const lag = Number(end.high) - (done < 0 ? Number(end.low) : done);
        this.ctx.metrics.lag.set(
          { binding: binding.label, topic, partition: String(end.partition) },
          Math.max(0, lag),
        );
      }
    }
  }

  private producer(): Promise<Producer> {
    this.producerReady ??= (async () => {
      const p = this.kafka.producer({ allowAutoTopicCreation: false });
      await p.connect();
      return p;
    })().catch((err: unknown) => {
      this.producerReady = undefined;
      throw err;
    });
    return this.producerReady;
  }
}

function kafkaClient(env: NodeJS.ProcessEnv, ctx: RecordRunContext): Kafka {
  const config = loadConfig(busConfig, env);
  if (config.KAFKA_BROKERS.length === 0)
    throw new ConfigError(['KAFKA_BROKERS: must be set when yaml.kafka.flow.adapter names bindings']);
  const security = kafkaSecurityOptions(config);
  return new Kafka({
    brokers: config.KAFKA_BROKERS,
    clientId: `${config.KAFKA_CLIENT_ID}-flow-adapter`,
    ...security,
    connectionTimeout: 3_000,
    requestTimeout: 10_000,
    logLevel: logLevel.ERROR,
    logCreator: () => (entry) =>
      ctx.logger.warn({ namespace: entry.namespace, ...entry.log }, `kafkajs: ${entry.log.message}`),
  });
}
