/**
 * One NATS binding: a queue subscription (its `queue` group shares the subject's messages). With
 * `stream`, a durable JetStream consumer named after the queue: a message is acked only after its
 * flow finished (or it was dead-lettered), so a crash has JetStream deliver it again after the ack
 * wait — at-least-once. Core NATS keeps nothing: a message in a flow when the process dies is lost,
 * and one that arrives while max-in-flight flows run is dropped (at-most-once, counted as dropped).
 */
import {
  AckPolicy,
  DeliverPolicy,
  type ConsumerMessages,
  type JsMsg,
  jetstream,
  jetstreamManager,
} from '@nats-io/jetstream';
import {
  headers as natsHeaders,
  type Msg,
  type NatsConnection,
  nanos,
  type Subscription,
} from '@nats-io/transport-node';
import type { NatsBinding } from './binding.ts';
import { natsRecordOf } from './nats-record.ts';
import { deadLetterHeaders, type InboundRecord, type RecordRunContext } from './record-run.ts';
import { runAndSettle } from './record-settle.ts';
import { RestartLoop } from './restart-loop.ts';
import { Slots } from './slots.ts';

export interface NatsBindingContext extends RecordRunContext {
  connection: NatsConnection;
  /** JetStream ack wait: longer than the slowest record's flow runs and retries together. */
  ackWaitMs: number;
  dlqTimeoutMs: number;
}

export class NatsBindingConsumer {
  readonly binding: NatsBinding;
  private readonly ctx: NatsBindingContext;
  private readonly slots: Slots;
  private subscription: Subscription | undefined;
  private messages: ConsumerMessages | undefined;
  private reading: Promise<void> | undefined;
  private stopping = false;
  private restarts: RestartLoop | undefined;

  constructor(binding: NatsBinding, ctx: NatsBindingContext) {
    this.binding = binding;
    this.ctx = ctx;
    this.slots = new Slots(binding.maxInFlight);
  }

  get ready(): boolean {
    return (
      !this.ctx.connection.isClosed() && (this.subscription !== undefined || this.messages !== undefined)
    );
  }

  async start(): Promise<void> {
    if (this.binding.stream === undefined) this.subscribeCore();
    else await this.consumeStream(this.binding.stream);
  }

  /** Stops taking messages and lets the flows in progress finish within `graceMs`. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.restarts?.stop();
    this.subscription?.unsubscribe();
    await this.messages?.close();
    await this.slots.idle(graceMs);
    await this.reading;
  }

  private subscribeCore(): void {
    const { binding, ctx } = this;
    this.subscription = ctx.connection.subscribe(binding.subject, {
      queue: binding.queue,
      callback: (err, msg) => {
        if (err)
          return ctx.logger.warn({ binding: binding.label, err }, 'flow adapter: NATS subscription error');
        if (!this.slots.tryTake()) {
          ctx.metrics.records.inc({ binding: binding.label, outcome: 'dropped' });
          return;
        }
        void this.handle(msg).finally(() => this.slots.give());
      },
    });
  }

  private async consumeStream(stream: string): Promise<void> {
    const { binding, ctx } = this;
    this.restarts ??= new RestartLoop(
      () => this.consumeStream(stream),
      (attempt, err) => {
        ctx.metrics.consumerRestarts.inc({ binding: binding.label });
        if (err)
          ctx.logger.warn({ binding: binding.label, attempt, err }, 'flow adapter: JetStream restart failed');
      },
    );
    const jsm = await jetstreamManager(ctx.connection);
    const config = {
      durable_name: binding.queue,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: binding.subject,
      max_ack_pending: binding.maxInFlight,
      ack_wait: nanos(ctx.ackWaitMs),
    };
    // Another replica may have made it a moment ago: the same configuration, kept as it is.
    await jsm.consumers.add(stream, config).catch(() => jsm.consumers.info(stream, binding.queue));
    const consumer = await jetstream(ctx.connection).consumers.get(stream, binding.queue);
    const messages = await consumer.consume({ max_messages: binding.maxInFlight });
    this.messages = messages;
    void this.endWhenDeleted(messages);
    this.reading = (async () => {
      for await (const m of messages) {
        this.restarts?.reset();
        await this.slots.take();
        void this.handle(m).finally(() => this.slots.give());
      }
    })()
      .finally(() => {
        // Ended, by a stop or by the server: readiness says so until the consumer runs again.
        this.messages = undefined;
        if (!this.stopping) this.restarts?.schedule();
      })
      .catch((err: unknown) =>
        ctx.logger.error({ binding: binding.label, err }, 'flow adapter: JetStream consumer ended'),
      );
  }

  /** A deleted consumer leaves the iterator waiting forever: end it, so the restart makes it again. */
  private async endWhenDeleted(messages: ConsumerMessages): Promise<void> {
    for await (const status of messages.status())
      if (status.type === 'consumer_deleted' || status.type === 'consumer_not_found') {
        this.ctx.logger.warn({ binding: this.binding.label }, 'flow adapter: JetStream consumer gone');
        messages.stop();
        return;
      }
  }

  private async handle(msg: Msg | JsMsg): Promise<void> {
    const { binding } = this;
    const jsMsg = 'ack' in msg ? msg : undefined;
    const dlqSubject = binding.dlqSubject;
    return runAndSettle(binding, natsRecordOf(msg, binding.stream), this.ctx, {
      between: async () => jsMsg?.working(),
      deadLetter: dlqSubject === undefined ? undefined : (r, error) => this.deadLetter(dlqSubject, r, error),
      settled: () => jsMsg?.ack(),
      words: { unit: 'message', dlqOption: 'dlq-subject', write: 'publish' },
    });
  }

  /** To `dlq-subject`, confirmed by JetStream when the binding reads a stream. */
  private async deadLetter(subject: string, record: InboundRecord, error: string): Promise<void> {
    const { binding, ctx } = this;
    const h = natsHeaders();
    for (const [name, value] of Object.entries(deadLetterHeaders(record, 'dlq.origin.subject', error)))
      h.set(name, value);
    const data = record.value ?? new Uint8Array(0);
    if (binding.stream === undefined) {
      ctx.connection.publish(subject, data, { headers: h });
      await ctx.connection.flush();
    } else await jetstream(ctx.connection).publish(subject, data, { headers: h, timeout: ctx.dlqTimeoutMs });
  }
}
