/**
 * NATS targets on plain core NATS, as RIG did (Gnat.pub / Gnat.request): the request event is
 * published as JSON to the endpoint's subject, and with `response_from: nats` it is sent as a NATS
 * request whose first reply is the client's response. JetStream (the bus adapter) is not used
 * here: a stream capturing the subject would answer a request with its own publish ack.
 * A publish is flushed (one round trip), so a 202 means the server took the message.
 */
import { type CloudEvent, serializeJsonEvent } from '@gatehouse/cloudevents';
import { connect, type NatsConnection, RequestError, TimeoutError } from '@nats-io/transport-node';
import type { EventPublisher } from './event-publishers.ts';

export type NatsReply =
  | { kind: 'reply'; body: Buffer; contentType: string | undefined }
  | { kind: 'timeout' }
  | { kind: 'no_responders' };

export class NatsTarget implements EventPublisher {
  private readonly nc: NatsConnection;

  private constructor(nc: NatsConnection) {
    this.nc = nc;
  }

  static async connect(servers: string[], name: string): Promise<NatsTarget> {
    const nc = await connect({ servers, name, maxReconnectAttempts: -1, reconnectTimeWait: 1000 });
    return new NatsTarget(nc);
  }

  async publish(subject: string, event: CloudEvent): Promise<void> {
    this.nc.publish(subject, serializeJsonEvent(event));
    await this.nc.flush();
  }

  async request(subject: string, event: CloudEvent, timeoutMs: number): Promise<NatsReply> {
    try {
      const msg = await this.nc.request(subject, serializeJsonEvent(event), { timeout: timeoutMs });
      return {
        kind: 'reply',
        body: Buffer.from(msg.data),
        contentType: msg.headers?.get('content-type') || undefined,
      };
    } catch (err) {
      if (err instanceof RequestError && err.isNoResponders()) return { kind: 'no_responders' };
      if (err instanceof TimeoutError || (err as Error).cause instanceof TimeoutError)
        return { kind: 'timeout' };
      throw err;
    }
  }

  async ping(): Promise<void> {
    await this.nc.flush();
  }

  async close(): Promise<void> {
    await this.nc.drain().catch(() => this.nc.close());
  }
}
