/**
 * Runs one JetStream subscriber: hands its messages to the handler one at a time, in order, and keeps
 * it going through broker trouble. The client recovers a consumer by itself after a reconnect (it
 * re-pulls, and re-creates ordered consumers); where it does not — it ends the iterator, or the
 * consumer or stream is gone in a way it only reports — the loop opens a fresh consumer where the
 * subscriber left off.
 */
import type { ConsumerMessages, ConsumerNotification, JsMsg } from '@nats-io/jetstream';
import { BusError, type Subscription } from './bus.ts';

export interface ConsumerSource {
  /** Opens the consumer at the place the subscriber should go on from (creating what is missing). */
  open(): Promise<ConsumerMessages>;
  /** Delivers one message to the handler (which never throws) and settles it with the broker. */
  handle(msg: JsMsg): Promise<void>;
  /** A message that arrived while closing: give it back so another member can have it. */
  release(msg: JsMsg): void;
  /** Notifications after which the client would not recover by itself: reopen instead. */
  reopenOn: ReadonlySet<ConsumerNotification['type']>;
}

/** Notifications worth telling the subscriber's `onError` about (the rest is routine). */
const REPORTED = new Set<ConsumerNotification['type']>([
  'consumer_not_found',
  'consumer_deleted',
  'stream_not_found',
  'no_responders',
]);

const REOPEN_DELAYS_MS = [250, 500, 1000, 2000, 5000];

export class ConsumerLoop implements Subscription {
  private readonly source: ConsumerSource;
  private readonly onError: ((err: Error) => void) | undefined;
  private current: ConsumerMessages | undefined;
  private closing = false;
  /** A restart was asked for after the current consumer was opened: it is closed and opened anew. */
  private restarting = false;
  private wakeUp: (() => void) | undefined;
  private done: Promise<void> = Promise.resolve();

  private constructor(source: ConsumerSource, onError: ((err: Error) => void) | undefined) {
    this.source = source;
    this.onError = onError;
  }

  /** Resolves once the first consumer is open; a failure there fails the subscribe. */
  static async start(source: ConsumerSource, onError?: (err: Error) => void): Promise<ConsumerLoop> {
    const loop = new ConsumerLoop(source, onError);
    const first = await source.open();
    loop.done = loop.run(first);
    return loop;
  }

  async close(): Promise<void> {
    if (!this.closing) {
      this.closing = true;
      this.wakeUp?.();
      await this.current?.close();
    }
    await this.done;
  }

  /**
   * Closes the current consumer and opens a new one at once (the source's `open` reads what
   * changed, e.g. its filter). Asked while one is opening, that one is closed and opened again.
   */
  restart(): void {
    if (this.closing) return;
    this.restarting = true;
    this.wakeUp?.();
    void this.current?.close();
  }

  private async run(first: ConsumerMessages): Promise<void> {
    let messages: ConsumerMessages | undefined = first;
    while (messages) {
      this.current = messages;
      if (this.restarting) void messages.close();
      void this.watch(messages);
      try {
        for await (const msg of messages) {
          if (this.closing) this.source.release(msg);
          else await this.source.handle(msg);
        }
      } catch (err) {
        if (!this.closing) this.report(err);
      }
      this.current = undefined;
      messages = await this.reopen();
    }
  }

  /** Opens a new consumer after a pause, retrying with growing pauses; undefined once closing. */
  private async reopen(): Promise<ConsumerMessages | undefined> {
    for (let attempt = 0; !this.closing; attempt++) {
      if (!this.restarting || attempt > 0)
        await this.pause(REOPEN_DELAYS_MS[Math.min(attempt, REOPEN_DELAYS_MS.length - 1)]!);
      if (this.closing) break;
      try {
        // A restart asked from here on finds this consumer opened before it: it is reopened.
        this.restarting = false;
        const messages = await this.source.open();
        if (!this.closing) return messages;
        await messages.close();
      } catch (err) {
        this.report(err);
      }
    }
    return undefined;
  }

  private async watch(messages: ConsumerMessages): Promise<void> {
    for await (const n of messages.status()) {
      if (this.closing) return;
      if (REPORTED.has(n.type)) this.report(new BusError(`nats consumer: ${describe(n)}`));
      if (this.source.reopenOn.has(n.type)) {
        // Ending the iterator makes run() reopen.
        await messages.close();
        return;
      }
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private report(err: unknown): void {
    try {
      this.onError?.(err instanceof Error ? err : new BusError(String(err)));
    } catch {
      // A failing error callback must not stop the subscription either.
    }
  }
}

function describe(n: ConsumerNotification): string {
  return 'name' in n ? `${n.type} (${n.name})` : n.type;
}
