/**
 * How far a consumer filtered by routes has read its stream. A filtered consumer delivers only what
 * its filter matches, so the last message delivered may be far behind the stream: a subscriber that
 * changes its routes then (nats-bus.ts, `route`) would start the new ones there and read everything
 * of them since. The server knows better. Its consumer info gives how many messages it sent
 * (`delivered.consumer_seq`) and how many matching ones it has not sent yet (`num_pending`); when
 * the subscriber has handled every message sent (the same count, of the same consumer) and none is
 * pending, everything matching up to the stream's end is behind it. The end is asked for before the
 * consumer info, so a message stored between the two cannot be passed over.
 *
 * NATS 2.9 also moved `delivered.stream_seq` past the messages the filter skipped; from 2.10 on it
 * stays at the last one sent, and only `num_pending` tells that nothing matching is left.
 */
import type { Consumer, JsMsg } from '@nats-io/jetstream';

/** The stream sequence of the last message the stream holds (0: none yet). */
export type StreamEnd = () => Promise<number>;

export class ReadThrough {
  private consumer: Consumer | undefined;
  private streamEnd: StreamEnd | undefined;
  /** The consumer and delivery count of the last message handled since `opened`. */
  private handledBy: string | undefined;
  private handledCount = 0;

  opened(consumer: Consumer, streamEnd: StreamEnd): void {
    this.consumer = consumer;
    this.streamEnd = streamEnd;
    this.handledBy = undefined;
    this.handledCount = 0;
  }

  handled(msg: JsMsg): void {
    this.handledBy = msg.info.consumer;
    this.handledCount = msg.info.deliverySequence;
  }

  /** The stream sequence through which every message the consumer matches was handled; else undefined. */
  async probe(): Promise<number | undefined> {
    const { consumer, streamEnd } = this;
    if (!consumer || !streamEnd) return undefined;
    const end = await streamEnd();
    const info = await consumer.info(false);
    if (consumer !== this.consumer) return undefined;
    const sent = info.delivered.consumer_seq;
    // An ordered consumer made anew (another name) counts from 0 again: only its own count tells.
    const allHandled =
      this.handledBy === undefined ? sent === 0 : this.handledBy === info.name && this.handledCount === sent;
    if (!allHandled) return undefined;
    return info.num_pending === 0 ? Math.max(end, info.delivered.stream_seq) : info.delivered.stream_seq;
  }
}
