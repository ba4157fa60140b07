/**
 * Whether the NATS connection is up right now. The client buffers whatever is written while it
 * reconnects and sends it once it is back, so a publish that gave up waiting could still land later;
 * writing only while connected (waiting a bounded time for a reconnect) keeps "rejected" meaning
 * "not sent".
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { BusError } from './bus.ts';

export class NatsConnectionState {
  private readonly nc: NatsConnection;
  private connected = true;
  private readonly waiters = new Set<() => void>();

  constructor(nc: NatsConnection) {
    this.nc = nc;
    void this.follow();
  }

  get isConnected(): boolean {
    return this.connected && !this.nc.isClosed();
  }

  /** Resolves at once while connected, else when the client reconnects; rejects at `deadline`. */
  async whenConnected(deadline: number): Promise<void> {
    if (this.isConnected) return;
    if (this.nc.isClosed()) throw new BusError('nats connection is closed');
    await new Promise<void>((resolve, reject) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        if (this.isConnected) resolve();
        else reject(new BusError('nats connection is closed'));
      };
      const timer = setTimeout(
        () => {
          this.waiters.delete(wake);
          reject(new BusError('nats server unreachable (still reconnecting)'));
        },
        Math.max(0, deadline - Date.now()),
      );
      this.waiters.add(wake);
    });
  }

  private async follow(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === 'disconnect') this.connected = false;
      else if (status.type === 'reconnect') this.set(true);
      else if (status.type === 'close') this.set(false);
    }
    this.set(false);
  }

  private set(connected: boolean): void {
    this.connected = connected;
    for (const wake of [...this.waiters]) wake();
  }
}
