/**
 * The flow adapters of the REST engine: kafka-flow-adapter.yaml and nats-flow-adapter.yaml read
 * when the engine is created (a bad file stops the host before anything listens), their consumers
 * started once the flows are loaded, stopped first on shutdown so in-flight records finish and
 * commit while the engine still runs their flows. Every replica runs every binding; consumer
 * groups (queue groups) share the records out among them.
 */
import type { FlowRunner } from '@gatehouse/flows';
import { ConfigError, type Logger, type Registry } from '@gatehouse/service-kit';
import type { Tracer } from '@opentelemetry/api';
import type { AppProperties, RestSettings } from '../config/index.ts';
import { loadBindings } from './adapter-files.ts';
import { AdapterMetrics } from './adapter-metrics.ts';
import type { Binding, KafkaBinding, NatsBinding } from './binding.ts';
import { KafkaFlowAdapter } from './kafka-flow-adapter.ts';
import { NatsFlowAdapter } from './nats-flow-adapter.ts';

export interface FlowAdapterHost {
  settings: RestSettings;
  props: AppProperties;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  registry: Registry;
  tracer: Tracer;
  origin: string;
  maxJsonDepth: number;
}

export class FlowAdapters {
  readonly bindings: readonly Binding[];
  private readonly host: FlowAdapterHost;
  private kafka: KafkaFlowAdapter | undefined;
  private nats: NatsFlowAdapter | undefined;
  private started = false;

  constructor(host: FlowAdapterHost) {
    this.host = host;
    this.bindings = loadBindings(host.settings, host.props);
  }

  /** Ready when there is nothing to read, or every binding's consumer reads. */
  get ready(): boolean {
    if (this.bindings.length === 0) return true;
    return this.started && (this.kafka?.ready ?? true) && (this.nats?.ready ?? true);
  }

  /** Throws a ConfigError naming each binding's flow that did not load (before anything listens). */
  checkFlows(runner: FlowRunner): void {
    const missing = this.bindings.flatMap((b) =>
      b.routing.flows.filter((f) => !runner.flows.get(f)).map((f) => `${b.label}: flow ${f} is not loaded`),
    );
    if (missing.length > 0) throw new ConfigError(missing);
  }

  async start(runner: FlowRunner): Promise<void> {
    if (this.bindings.length === 0) return;
    const { host } = this;
    this.checkFlows(runner);
    const s = host.settings;
    const ctx = {
      runner,
      metrics: new AdapterMetrics(host.registry),
      logger: host.logger.child({ component: 'flow-adapter' }),
      tracer: host.tracer,
      origin: host.origin,
      maxRecordBytes: s['flow.adapter.max-record-bytes'],
      maxJsonDepth: host.maxJsonDepth,
      maxRetries: s['kafka.flow.max.retries'],
      backoffMs: s['kafka.flow.retry.backoff.ms'],
    };
    const kafka = this.bindings.filter((b): b is KafkaBinding => b.kind === 'kafka');
    const nats = this.bindings.filter((b): b is NatsBinding => b.kind === 'nats');
    const dlqTimeoutMs = s['kafka.dlq.timeout.ms'];
    if (kafka.length > 0)
      this.kafka = new KafkaFlowAdapter(kafka, host.env, ctx, {
        refreshMs: s['kafka.flow.metadata.refresh.ms'],
        maxPatternTopics: s['kafka.flow.pattern.max-topics'],
        sessionTimeoutMs: s['kafka.flow.session.timeout.ms'],
        dlqTimeoutMs,
      });
    if (nats.length > 0)
      this.nats = new NatsFlowAdapter(nats, host.env, ctx, {
        ackWaitMs: this.ackWaitMs(runner),
        dlqTimeoutMs,
      });
    await Promise.all([this.kafka?.start(), this.nats?.start()]);
    this.started = true;
    ctx.logger.info({ bindings: this.bindings.map((b) => b.label) }, 'flow adapters reading');
  }

  async stop(graceMs: number): Promise<void> {
    this.started = false;
    await Promise.allSettled([this.kafka?.stop(graceMs), this.nats?.stop(graceMs)]);
  }

  /** The slowest record: every try at the longest flow ttl, the backoffs between, and a margin. */
  private ackWaitMs(runner: FlowRunner): number {
    const s = this.host.settings;
    const tries = s['kafka.flow.max.retries'] + 1;
    const ttl = Math.max(
      ...this.bindings.flatMap((b) => b.routing.flows.map((f) => runner.flows.get(f)?.ttlMs ?? 0)),
    );
    return tries * ttl + (tries - 1) * s['kafka.flow.retry.backoff.ms'] + 5_000;
  }
}
