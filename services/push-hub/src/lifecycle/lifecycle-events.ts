/**
 * A replica's lifecycle events (LIFECYCLE_EVENTS_TOPIC): what the hub and the long-poll transport
 * tell of each connection, made into events (lifecycle-event.ts) and handed to the batching
 * producer (lifecycle-producer.ts). `emitLifecycle` takes any event made elsewhere (presence).
 */
import type { CloudEvent } from '@gatehouse/cloudevents';
import {
  type ChangeCause,
  type ConnectionSnapshot,
  connectionEnded,
  connectionOpened,
  type EndReason,
  replicaGoneEvent,
  subscriptionsChangedEvent,
} from './lifecycle-event.ts';
import type { LifecycleProducer } from './lifecycle-producer.ts';

/** What the hub tells of the connections it holds (HubOptions.lifecycle). */
export interface ConnectionLifecycle {
  opened(conn: ConnectionSnapshot): void;
  closed(conn: ConnectionSnapshot, reason: EndReason): void;
  changed(conn: ConnectionSnapshot, cause: ChangeCause): void;
}

export class LifecycleEvents implements ConnectionLifecycle {
  private readonly replica: string;
  private readonly producer: LifecycleProducer;

  constructor(replica: string, producer: LifecycleProducer) {
    this.replica = replica;
    this.producer = producer;
  }

  /** Produces any lifecycle event (batched, bounded, never blocking): e.g. `gw.presence.joined`. */
  emitLifecycle(event: CloudEvent): void {
    this.producer.emit(event);
  }

  opened(conn: ConnectionSnapshot): void {
    this.producer.emit(connectionOpened(this.replica, conn));
  }

  closed(conn: ConnectionSnapshot, reason: EndReason): void {
    this.producer.emit(connectionEnded(this.replica, conn, reason));
  }

  changed(conn: ConnectionSnapshot, cause: ChangeCause): void {
    this.producer.emit(subscriptionsChangedEvent(this.replica, conn, cause));
  }

  /**
   * A replica died without stopping (killed, out of memory, its node lost): it told nobody of the
   * connections it held ending. One live replica says so, once; every connection opened there
   * without a close has ended.
   */
  replicaGone(replica: string): void {
    this.producer.emit(replicaGoneEvent(this.replica, replica));
  }

  /** Produces what is buffered until `deadline` (ms since the epoch); see LifecycleProducer.close. */
  close(deadline: number): Promise<void> {
    return this.producer.close(deadline);
  }
}
