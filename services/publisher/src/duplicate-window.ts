/**
 * Tells a producer that an event it posts again was taken already: the (source, id) of each event
 * accepted over HTTP is remembered in the store for EVENT_DEDUPE_WINDOW_SECONDS (the store every
 * replica shares, so a retry that lands on another replica is known too), as NATS JetStream's
 * duplicate window does. A copy inside the window is answered 202 with `Gatehouse-Duplicate: true`
 * and not published: without this the hubs drop it anyway (same source and id), but only while the
 * first copy is in their rings, and the producer never learns.
 *
 * The order is check, publish, remember: an event is remembered only once the fan-out stream took
 * it, so a post the stream refused (503), or one whose publisher died before answering, is
 * published when retried. Two copies posted at the same moment may both be published; the hubs
 * drop the second. While the store cannot be reached the check is skipped (the event is published,
 * and the hubs' check is left): a missing answer header is better than refusing events.
 *
 * Keys are a hash of source and id, so a long source costs the store no more than a short one.
 */
import { createHash } from 'node:crypto';
import type { CloudEvent } from '@gatehouse/cloudevents';
import type { Logger } from '@gatehouse/service-kit';
import type { Store } from '@gatehouse/store';

export class DuplicateWindow {
  private readonly store: Store;
  private readonly seconds: number;
  private readonly logger: Logger;

  constructor(store: Store, seconds: number, logger: Logger) {
    this.store = store;
    this.seconds = seconds;
    this.logger = logger;
  }

  /** Whether an event of the same source and id was accepted within the window. */
  async seen(event: CloudEvent): Promise<boolean> {
    if (this.seconds === 0) return false;
    try {
      return await this.store.exists(keyOf(event));
    } catch (err) {
      this.logger.warn({ err }, 'duplicate check skipped: the store is unavailable');
      return false;
    }
  }

  /** Remembers an event the fan-out stream has taken. */
  async remember(event: CloudEvent): Promise<void> {
    if (this.seconds === 0) return;
    try {
      await this.store.set(keyOf(event), '1', { ttlSeconds: this.seconds });
    } catch (err) {
      this.logger.warn(
        { err },
        'accepted event not remembered for the duplicate check: the store is unavailable',
      );
    }
  }
}

function keyOf(event: CloudEvent): string {
  const hash = createHash('sha256').update(event.source).update('\0').update(event.id).digest('base64url');
  return `event-id:${hash}`;
}
