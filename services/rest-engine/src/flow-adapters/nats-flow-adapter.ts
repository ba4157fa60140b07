/** The NATS side of the flow adapters: one connection (NATS_SERVERS and its security settings), a consumer per binding. */
import { busConfig, natsSecurityOptions } from '@gatehouse/bus';
import { connectNats } from '@gatehouse/bus/nats';
import { ConfigError, loadConfig } from '@gatehouse/service-kit';
import type { NatsConnection } from '@nats-io/transport-node';
import type { NatsBinding } from './binding.ts';
import { NatsBindingConsumer } from './nats-binding-consumer.ts';
import type { RecordRunContext } from './record-run.ts';

export interface NatsAdapterSettings {
  ackWaitMs: number;
  dlqTimeoutMs: number;
}

export class NatsFlowAdapter {
  private readonly bindings: readonly NatsBinding[];
  private readonly env: NodeJS.ProcessEnv;
  private readonly ctx: RecordRunContext;
  private readonly settings: NatsAdapterSettings;
  private connection: NatsConnection | undefined;
  private consumers: NatsBindingConsumer[] = [];

  constructor(
    bindings: readonly NatsBinding[],
    env: NodeJS.ProcessEnv,
    ctx: RecordRunContext,
    settings: NatsAdapterSettings,
  ) {
    this.bindings = bindings;
    this.env = env;
    this.ctx = ctx;
    this.settings = settings;
    if (loadConfig(busConfig, env).NATS_SERVERS.length === 0)
      throw new ConfigError(['NATS_SERVERS: must be set when yaml.nats.flow.adapter names bindings']);
  }

  get ready(): boolean {
    return this.consumers.length === this.bindings.length && this.consumers.every((c) => c.ready);
  }

  async start(): Promise<void> {
    const config = loadConfig(busConfig, this.env);
    const connection = await connectNats({
      servers: config.NATS_SERVERS,
      name: `${config.KAFKA_CLIENT_ID}-flow-adapter`,
      maxReconnectAttempts: -1,
      ...natsSecurityOptions(config),
    });
    this.connection = connection;
    const ctx = { ...this.ctx, connection, ...this.settings };
    const consumers = this.bindings.map((b) => new NatsBindingConsumer(b, ctx));
    await Promise.all(consumers.map((c) => c.start()));
    this.consumers = consumers;
  }

  async stop(graceMs: number): Promise<void> {
    await Promise.all(this.consumers.map((c) => c.stop(graceMs)));
    await this.connection?.drain().catch(() => this.connection?.close());
  }
}
