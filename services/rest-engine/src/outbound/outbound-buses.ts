/**
 * The buses flows publish on, connected at the first publish that needs one rather than at start:
 * an engine whose flows never publish opens no broker connection and loads no broker client, and
 * a broker down at start costs the engine nothing but those publishes (503 until it answers).
 * A failed connection is forgotten, so the next publish tries again. The fan-out bus may be given
 * (the embedded gateway's in-process bus); given buses are not closed here.
 */
import { type Bus, type BusKind, BusUnavailableError, connectBus } from '@gatehouse/bus';
import type { OutboundConfig } from '../config/index.ts';

/** A bus the flows asked for is not configured on this engine (answered 503, as a proxy target). */
export class BusNotConfiguredError extends Error {
  override readonly name = 'BusNotConfiguredError';
}

export class OutboundBuses {
  private readonly config: OutboundConfig;
  private readonly connecting = new Map<string, Promise<Bus>>();
  private readonly given: Bus | undefined;
  private closed = false;

  constructor(config: OutboundConfig, fanoutBus: Bus | undefined) {
    this.config = config;
    this.given = fanoutBus;
  }

  kafka(): Promise<Bus> {
    if (this.config.KAFKA_BROKERS.length === 0)
      return Promise.reject(
        new BusNotConfiguredError('Kafka is not configured on this engine (KAFKA_BROKERS)'),
      );
    return this.connect('kafka');
  }

  nats(): Promise<Bus> {
    if (this.config.NATS_SERVERS.length === 0)
      return Promise.reject(
        new BusNotConfiguredError('NATS is not configured on this engine (NATS_SERVERS)'),
      );
    return this.connect('nats');
  }

  /** The bus of FANOUT_TOPIC (FANOUT_BUS), the one the hubs read. */
  fanout(): Promise<Bus> {
    return this.given ? Promise.resolve(this.given) : this.connect(this.config.FANOUT_BUS);
  }

  /** Closes the buses connected here; a publish after it fails (503) instead of connecting anew. */
  async close(): Promise<void> {
    this.closed = true;
    const open = [...this.connecting.values()];
    this.connecting.clear();
    const buses = await Promise.allSettled(open);
    await Promise.allSettled(buses.map((b) => (b.status === 'fulfilled' ? b.value.close() : undefined)));
  }

  /** One connection per kind, shared by every publish (the fan-out bus may be Kafka or NATS too). */
  private connect(kind: BusKind): Promise<Bus> {
    if (this.closed) return Promise.reject(new BusUnavailableError('the REST engine is stopping'));
    let bus = this.connecting.get(kind);
    if (bus === undefined) {
      bus = connectBus(kind, this.config).catch((err: unknown) => {
        this.connecting.delete(kind);
        throw new BusUnavailableError(`${kind} could not be reached: ${(err as Error).message}`, {
          cause: err,
        });
      });
      this.connecting.set(kind, bus);
    }
    return bus;
  }
}
