/**
 * The event source of the cluster bench: posts CloudEvents to the publisher (`POST /_gw/v1/events`)
 * at a steady rate, paced by the clock; event n is of type `cl.e<n mod types>` and carries `n` and
 * its publish time `sentAt` (performance.timeOrigin + performance.now(), ms, comparable across this
 * machine's processes). A post that fails is posted again with the same CloudEvent id until
 * accepted (a careful producer), so an event owed is one the publisher answered 202.
 */
import { Agent, request } from 'node:http';
import { eventType } from './plan.ts';

export interface ProducedEvent {
  n: number;
  type: number;
  sentAt: number;
  accepted: boolean;
  posts: number;
}

export class Producer {
  readonly events: ProducedEvent[] = [];
  readonly failures = new Map<string, number>();
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 16 });
  private readonly pending = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private startedAt = 0;
  private stopped = false;

  private readonly url: string;
  private readonly rate: number;
  private readonly types: number;
  private readonly idPrefix: string;
  /** No event past this number is made (the clients' counters have room for this many). */
  private readonly maxEvents: number;

  /** The CloudEvent type of type index t (default `cl.e<t>`). */
  private readonly typeName: (t: number) => string;

  constructor(
    url: string,
    rate: number,
    types: number,
    idPrefix: string,
    maxEvents: number,
    typeName: (t: number) => string = eventType,
  ) {
    this.typeName = typeName;
    this.url = url;
    this.rate = rate;
    this.types = types;
    this.idPrefix = idPrefix;
    this.maxEvents = maxEvents;
  }

  start(): void {
    this.startedAt = performance.now();
    this.timer = setInterval(() => {
      const due = Math.floor(((performance.now() - this.startedAt) * this.rate) / 1000);
      while (this.events.length < Math.min(due, this.maxEvents)) this.produce();
    }, 10);
  }

  /** Stops making events; waits (up to `timeoutMs`) until every one made is accepted. */
  async stop(timeoutMs = 30_000): Promise<void> {
    clearInterval(this.timer);
    const deadline = Date.now() + timeoutMs;
    while (this.pending.size > 0 && Date.now() < deadline)
      await Promise.race([...this.pending, new Promise((r) => setTimeout(r, 200))]);
    this.stopped = true;
    this.agent.destroy();
  }

  accepted(): number {
    return this.events.filter((e) => e.accepted).length;
  }

  /** Event n's type index, or −1 when it was never accepted (what the clients' tally takes). */
  acceptedTypes(): number[] {
    return this.events.map((e) => (e.accepted ? e.type : -1));
  }

  private produce(): void {
    const n = this.events.length;
    const event: ProducedEvent = {
      n,
      type: n % this.types,
      sentAt: Math.round((performance.timeOrigin + performance.now()) * 1000) / 1000,
      accepted: false,
      posts: 0,
    };
    this.events.push(event);
    const body = `{"specversion":"1.0","id":"${this.idPrefix}-${n}","source":"/cluster-bench","type":"${this.typeName(event.type)}","data":{"n":${n},"sentAt":${event.sentAt}}}`;
    const posting = this.postUntilAccepted(event, body).finally(() => this.pending.delete(posting));
    this.pending.add(posting);
  }

  private async postUntilAccepted(event: ProducedEvent, body: string): Promise<void> {
    while (!this.stopped) {
      event.posts++;
      const failure = await this.post(body);
      if (failure === undefined) {
        event.accepted = true;
        return;
      }
      this.failures.set(failure, (this.failures.get(failure) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** event.posts)));
    }
  }

  private post(body: string): Promise<string | undefined> {
    return new Promise((resolve) => {
      const req = request(
        `${this.url}/_gw/v1/events`,
        {
          method: 'POST',
          agent: this.agent,
          headers: {
            'content-type': 'application/cloudevents+json',
            'content-length': Buffer.byteLength(body),
          },
          timeout: 10_000,
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode === 202 ? undefined : String(res.statusCode)));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (err) => resolve((err as NodeJS.ErrnoException).code ?? err.message));
      req.end(body);
    });
  }
}
