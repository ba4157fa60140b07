/**
 * Produces lifecycle events to their topic in batches, without ever holding a connection up or
 * growing without bound (soketi batches its webhooks the same way, for the same reason: a burst of
 * connects must not become one request per event).
 *
 * - `emit` only appends to a buffer: it never waits, never throws. A batch goes out once
 *   `batchSize` events are waiting, else `flushIntervalMs` after the first one came.
 * - A batch is published all at once (the Kafka adapter sends publishes made together as one
 *   produce request, kafka-publish-batcher.ts); one batch is in flight at a time.
 * - A publish the bus refuses stays at the head of the buffer and is tried again after a backoff
 *   (doubling from `retryBaseMs` to `retryMaxMs`); the ones it took are not sent again.
 * - The buffer holds at most `maxBuffer` events and `maxBufferBytes` bytes: beyond either, a new
 *   event is dropped and counted (gw_lifecycle_events_dropped_total{reason="buffer_full"}). A bus
 *   that is down costs this bounded memory, never a stalled connect or close.
 * - `close(deadline)` flushes what is left (the closes a drain caused included) until the buffer is
 *   empty or the deadline passes; what is still buffered then is dropped and counted (`shutdown`).
 */
import type { Bus } from '@gatehouse/bus';
import { type CloudEvent, type KafkaEventMessage, toStructuredKafka } from '@gatehouse/cloudevents';
import type { Logger } from '@gatehouse/service-kit';
import type { LifecycleMetrics } from './lifecycle-metrics.ts';

export interface LifecycleProducerOptions {
  bus: Bus;
  topic: string;
  batchSize: number;
  flushIntervalMs: number;
  maxBuffer: number;
  maxBufferBytes: number;
  metrics: LifecycleMetrics;
  logger: Logger;
  retryBaseMs?: number;
  retryMaxMs?: number;
}

interface Buffered {
  message: KafkaEventMessage;
  bytes: number;
}

export class LifecycleProducer {
  private readonly opts: LifecycleProducerOptions;
  private buffer: Buffered[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private failures = 0;
  private closed = false;
  /** The close gave up on what was left: a batch still in flight counts only what the bus took. */
  private gaveUp = false;

  constructor(options: LifecycleProducerOptions) {
    this.opts = options;
  }

  /** Events waiting to be produced. */
  get buffered(): number {
    return this.buffer.length;
  }

  /** Buffers one event for the next batch; drops it (counted) when the buffer is full or closed. */
  emit(event: CloudEvent): void {
    const message = toStructuredKafka(event);
    const bytes = message.value.length + 64;
    if (this.closed) {
      this.drop('shutdown');
      return;
    }
    if (this.buffer.length >= this.opts.maxBuffer || this.bytes + bytes > this.opts.maxBufferBytes) {
      this.drop('buffer_full');
      return;
    }
    this.buffer.push({ message, bytes });
    this.bytes += bytes;
    this.opts.metrics.buffered(this.buffer.length);
    this.schedule();
  }

  /**
   * Flushes until the buffer is empty or `deadline` (ms since the epoch) passes; then drops, and
   * counts, what is left. Later emits are dropped (`shutdown`).
   */
  async close(deadline: number): Promise<void> {
    this.closed = true;
    this.clearTimer();
    while (this.buffer.length > 0 && Date.now() < deadline) {
      this.inFlight ??= this.send();
      // A bus that does not answer (a broker retrying for its own time-out) is not waited for past it.
      await within(this.inFlight, deadline - Date.now());
      if (this.failures > 0 && this.buffer.length > 0)
        await sleep(Math.min(this.backoffMs(), Math.max(0, deadline - Date.now())));
    }
    const left = this.buffer.length;
    if (left > 0) {
      this.gaveUp = true;
      this.opts.logger.warn(
        { left, topic: this.opts.topic },
        'lifecycle events not produced before shutdown',
      );
      for (let i = 0; i < left; i++) this.drop('shutdown');
      this.buffer = [];
      this.bytes = 0;
      this.opts.metrics.buffered(0);
    }
  }

  private schedule(): void {
    if (this.closed || this.inFlight || this.failures > 0) return;
    if (this.buffer.length >= this.opts.batchSize) {
      this.clearTimer();
      this.inFlight = this.send();
    } else {
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        this.inFlight ??= this.send();
      }, this.opts.flushIntervalMs);
      this.timer.unref();
    }
  }

  /** Publishes the head of the buffer; keeps, for a retry, the events the bus refused. */
  private async send(): Promise<void> {
    const batch = this.buffer.slice(0, this.opts.batchSize);
    const results = await Promise.allSettled(
      batch.map((b) => this.opts.bus.publish(this.opts.topic, b.message)),
    );
    const refused = batch.filter((_, i) => results[i]!.status === 'rejected');
    if (this.gaveUp) {
      this.opts.metrics.produced(batch.length - refused.length);
      return;
    }
    this.buffer = [...refused, ...this.buffer.slice(batch.length)];
    this.bytes -= batch.reduce((n, b) => n + b.bytes, 0) - refused.reduce((n, b) => n + b.bytes, 0);
    this.opts.metrics.produced(batch.length - refused.length);
    this.opts.metrics.buffered(this.buffer.length);
    this.inFlight = undefined;
    if (refused.length > 0) {
      this.failures++;
      const err = (results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason;
      this.opts.metrics.failed();
      if (this.failures === 1 || this.failures % 20 === 0)
        this.opts.logger.warn(
          { err, refused: refused.length, buffered: this.buffer.length, attempt: this.failures },
          'lifecycle events not produced; trying again',
        );
      if (!this.closed) this.retryLater();
      return;
    }
    this.failures = 0;
    if (this.buffer.length > 0) this.schedule();
  }

  private retryLater(): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.inFlight ??= this.send();
    }, this.backoffMs());
    this.timer.unref();
  }

  /** Doubling from retryBaseMs, at most retryMaxMs, with up to a quarter of jitter. */
  private backoffMs(): number {
    const base = this.opts.retryBaseMs ?? 100;
    const max = this.opts.retryMaxMs ?? 5000;
    const ms = Math.min(max, base * 2 ** Math.min(20, this.failures - 1));
    return Math.round(ms * (0.75 + Math.random() * 0.25));
  }

  private drop(reason: 'buffer_full' | 'shutdown'): void {
    this.opts.metrics.dropped(reason);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, Math.max(0, ms)));
}

/** Resolves when `work` settles or after `ms`, whichever comes first (its timer cleared then). */
async function within(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise<void>((r) => (timer = setTimeout(r, Math.max(0, ms))))]);
  clearTimeout(timer);
}
