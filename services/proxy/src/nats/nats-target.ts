/**
 * NATS targets on plain core NATS, as RIG did (Gnat.pub / Gnat.request): the request event is
 * published as JSON to the endpoint's subject, and with `response_from: nats` it is sent as a NATS
 * request whose first reply is the client's response. JetStream (the bus adapter) is not used
 * here: a stream capturing the subject would answer a request with its own publish ack.
 * A publish is flushed (one round trip), so a 202 means the server took the message. A server that
 * cannot be reached (closed, or no flush within the time-out while reconnecting) is a
 * DependencyUnavailableError: the proxy answers 503 with Retry-After.
 */
import { type CloudEvent, serializeJsonEvent } from '@gatehouse/cloudevents';
import { DependencyUnavailableError } from '@gatehouse/service-kit';
import { connectNats, type NatsSecurityOptions } from '@gatehouse/bus/nats';
import { type NatsConnection, RequestError, TimeoutError } from '@nats-io/transport-node';
import type { EventPublisher } from '../events/index.ts';

export type NatsReply =
  | { kind: 'reply'; body: Buffer; contentType: string | undefined }
  | { kind: 'timeout' }
  | { kind: 'no_responders' };

export class NatsTarget implements EventPublisher {
  private readonly nc: NatsConnection;
  private readonly flushTimeoutMs: number;

  private constructor(nc: NatsConnection, flushTimeoutMs: number) {
    this.nc = nc;
    this.flushTimeoutMs = flushTimeoutMs;
  }

  /** `security`: credentials and TLS, as `natsSecurityOptions` of @gatehouse/bus reads them. */
  static async connect(
    servers: string[],
    name: string,
    security: NatsSecurityOptions = {},
    flushTimeoutMs = 5000,
  ): Promise<NatsTarget> {
    const nc = await connectNats({
      ...security,
      servers,
      name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
    });
    return new NatsTarget(nc, flushTimeoutMs);
  }

  async publish(subject: string, event: CloudEvent): Promise<void> {
    try {
      this.nc.publish(subject, serializeJsonEvent(event));
      await this.flushed();
    } catch (err) {
      throw new DependencyUnavailableError(
        'nats',
        `nats publish to ${subject} failed: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
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
      throw new DependencyUnavailableError(
        'nats',
        `nats request to ${subject} failed: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
  }

  async ping(): Promise<void> {
    await this.flushed();
  }

  /** A round trip to the server, bounded: while it reconnects, flush() would wait for it. */
  private async flushed(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${this.flushTimeoutMs} ms`)),
        this.flushTimeoutMs,
      );
    });
    try {
      await Promise.race([this.nc.flush(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.nc.drain().catch(() => this.nc.close());
  }
}
