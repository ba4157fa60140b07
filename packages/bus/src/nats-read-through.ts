/**
 * How far a consumer filtered by routes has read its stream. A filtered consumer delivers only what
 * its filter matches, so the last message delivered may be far behind the stream: a subscriber that
 * changes its routes then (nats-bus.ts, `route`) would start the new ones there and read everything
 * of them since. The server knows better: its consumer info gives the stream sequence it has looked
 * at (`delivered.stream_seq`, past messages it did not match) and how many messages it sent
 * (`delivered.consumer_seq`). When the subscriber has handled every message sent (the same count,
 * of the same consumer), everything matching up to that stream sequence is behind it.
 */
import type { Consumer, JsMsg } from '@nats-io/jetstream';

export class ReadThrough {
  private consumer: Consumer | undefined;
  /** The consumer and delivery count of the last message handled since `opened`. */
  private handledBy: string | undefined;
  private handledCount = 0;

  opened(consumer: Consumer): void {
    this.consumer = consumer;
    this.handledBy = undefined;
    this.handledCount = 0;
  }

  handled(msg: JsMsg): void {
    this.handledBy = msg.info.consumer;
    this.handledCount = msg.info.deliverySequence;
  }

  /** The stream sequence through which every message the consumer matches was handled; else undefined. */
  async probe(): Promise<number | undefined> {
    const consumer = this.consumer;
    if (!consumer) return undefined;
    const info = await consumer.info(false);
    if (consumer !== this.consumer) return undefined;
    const sent = info.delivered.consumer_seq;
    // An ordered consumer made anew (another name) counts from 0 again: only its own count tells.
    const allHandled =
      this.handledBy === undefined ? sent === 0 : this.handledBy === info.name && this.handledCount === sent;
    return allHandled ? info.delivered.stream_seq : undefined;
  }
}
