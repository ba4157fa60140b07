/**
 * Requests addressed to one replica (the hub holding a connection, the proxy holding a request) over
 * the control bus: each replica listens on `<prefix><its id>`; a request carries the asker's id so
 * the answer comes back on the asker's topic. An unanswered request resolves undefined after the time-out (replica gone).
 */
import { randomUUID } from 'node:crypto';
import { type Bus, BusUnavailableError, type Subscription } from './bus.ts';
import type { Logger } from '@gatehouse/service-kit';

interface Envelope {
  kind: 'request' | 'reply';
  id: string;
  from: string;
  body: unknown;
}

export type RequestHandler = (body: unknown) => Promise<unknown> | unknown;

export class ReplicaChannel {
  private readonly pending = new Map<string, (body: unknown) => void>();
  private subscription: Subscription | undefined;
  private readonly bus: Bus;
  private readonly replica: string;
  private readonly prefix: string;
  private readonly logger: Logger;

  constructor(bus: Bus, replica: string, logger: Logger, prefix = 'gw.control.') {
    this.bus = bus;
    this.replica = replica;
    this.logger = logger;
    this.prefix = prefix;
  }

  async start(handle: RequestHandler): Promise<void> {
    this.subscription = await this.bus.subscribe(
      this.prefix + this.replica,
      async (m) => {
        const env = JSON.parse(m.value.toString()) as Envelope;
        if (env.kind === 'reply') {
          this.pending.get(env.id)?.(env.body);
          return;
        }
        const body = await handle(env.body);
        const reply: Envelope = { kind: 'reply', id: env.id, from: this.replica, body };
        await this.bus.publish(this.prefix + env.from, { value: JSON.stringify(reply) });
      },
      { onError: (err) => this.logger.warn({ err }, 'control message failed') },
    );
  }

  /**
   * Resolves with the reply, or undefined when none came in time (the replica is gone). Rejects
   * when the bus could not take the request: at once on a failed publish, and at the time-out while
   * the publish is still unanswered (a broker that hangs is as unreachable as one that refuses).
   */
  async request(replica: string, body: unknown, timeoutMs: number): Promise<unknown> {
    const id = randomUUID();
    const env: Envelope = { kind: 'request', id, from: this.replica, body };
    let published = false;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        if (published) resolve(undefined);
        else reject(new BusUnavailableError(`the control bus did not take a request within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, (reply) => {
        clearTimeout(timer);
        this.pending.delete(id);
        resolve(reply);
      });
      this.bus.publish(this.prefix + replica, { value: JSON.stringify(env) }).then(
        () => {
          published = true;
        },
        (err) => {
          clearTimeout(timer);
          this.pending.delete(id);
          reject(err);
        },
      );
    });
  }

  async close(): Promise<void> {
    await this.subscription?.close();
  }
}
