/**
 * Brings a correlated response to the replica holding the request: directly when that is this
 * replica, otherwise over the control bus (ReplicaChannel on `gw.proxy.<replica>`), which answers
 * whether the request was still waiting. This replaces RIG's `send` to a PID on another node.
 */
import type { Bus } from '@gatehouse/bus';
import { ReplicaChannel } from '@gatehouse/bus';
import type { Logger } from '@gatehouse/service-kit';
import type { Store } from '@gatehouse/store';
import type { CorrelatedResponse, PendingResponses } from './pending-responses.ts';

export type DeliveryResult = 'delivered' | 'forged' | 'not_waiting';

interface RemoteDelivery {
  id: string;
  status: number;
  headers: Record<string, string>;
  /** base64 */
  body: string;
}

export class ResponseRouter {
  private readonly pending: PendingResponses;
  private readonly channel: ReplicaChannel;
  private readonly timeoutMs: number;

  constructor(
    pending: PendingResponses,
    options: { controlBus: Bus; store: Store; logger: Logger; timeoutMs: number },
  ) {
    this.pending = pending;
    this.timeoutMs = options.timeoutMs;
    this.channel = new ReplicaChannel({
      bus: options.controlBus,
      replica: pending.replicaId,
      logger: options.logger,
      store: options.store,
      prefix: 'gw.proxy.',
    });
  }

  start(): Promise<void> {
    return this.channel.start((body) => {
      const d = body as RemoteDelivery;
      return this.pending.deliver(d.id, {
        status: d.status,
        headers: d.headers,
        body: Buffer.from(d.body, 'base64'),
      });
    });
  }

  close(): Promise<void> {
    return this.channel.close();
  }

  /** Only responses for this replica's requests, ignoring the rest (each replica reads every response). */
  deliverLocal(correlation: string, response: CorrelatedResponse): DeliveryResult | 'foreign' {
    const owner = this.pending.decode(correlation);
    if (owner === undefined) return 'forged';
    if (owner.replica !== this.pending.replicaId) return 'foreign';
    return this.pending.deliver(owner.id, response) ? 'delivered' : 'not_waiting';
  }

  async deliver(correlation: string, response: CorrelatedResponse): Promise<DeliveryResult> {
    const owner = this.pending.decode(correlation);
    if (owner === undefined) return 'forged';
    if (owner.replica === this.pending.replicaId)
      return this.pending.deliver(owner.id, response) ? 'delivered' : 'not_waiting';
    const remote: RemoteDelivery = {
      id: owner.id,
      status: response.status,
      headers: response.headers,
      body: response.body.toString('base64'),
    };
    const reply = await this.channel.request(owner.replica, remote, this.timeoutMs);
    return reply === true ? 'delivered' : 'not_waiting';
  }
}
