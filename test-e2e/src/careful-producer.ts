/**
 * A producer that posts CloudEvents over HTTP to the publishers as a careful client does: paced by
 * the clock at `rate` events/s, round robin over the publishers, and a post that fails (connection
 * refused or reset, no answer in time, any answer but 202) is posted again to the next publisher,
 * with the SAME CloudEvent id, until one accepts it. An event can so reach the fan-out stream twice
 * (a publisher stored it and died before answering); the hubs drop a repeated id.
 *
 * Event `n` is a `greeting` of group `n % groups` (`data.name` is `g<group>`), and `data.n` is `n`,
 * which the resuming clients read. For each event it keeps when it was made and when a publisher
 * answered 202 (the moment the gateway owes it to every matching client).
 */
import { sleep } from '@gatehouse/testkit';

export interface ProducedEvent {
  n: number;
  group: number;
  /** When the producer made it (ms since the epoch). */
  createdAt: number;
  /** When a publisher answered 202; undefined while it is not accepted yet. */
  acceptedAt: number | undefined;
  /** Posts it took (1 when the first was accepted). */
  posts: number;
}

export interface CarefulProducerOptions {
  /** The publishers' public URLs, `http://127.0.0.1:<port>`; the same URLs across their restarts. */
  publishers: string[];
  rate: number;
  groups: number;
  /** Prefix of every CloudEvent id, so runs never share ids. */
  idPrefix: string;
  /** Time-out of one post. */
  postTimeoutMs?: number;
}

export class CarefulProducer {
  readonly events: ProducedEvent[] = [];
  /** Failed posts by what went wrong: an HTTP status, or the error's name. */
  readonly failures = new Map<string, number>();
  private readonly options: Required<CarefulProducerOptions>;
  private readonly pending = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private startedAt = 0;
  private stopped = false;

  constructor(options: CarefulProducerOptions) {
    this.options = { postTimeoutMs: 10_000, ...options };
  }

  start(): void {
    this.startedAt = Date.now();
    // Paced by the clock, not by the timer: a tick that comes late makes what is due.
    this.timer = setInterval(() => {
      const due = Math.floor(((Date.now() - this.startedAt) * this.options.rate) / 1000);
      while (this.events.length < due) this.produce();
    }, 20);
  }

  /** Stops making events and waits until every one made is accepted (or `timeoutMs` passes). */
  async stop(timeoutMs = 60_000): Promise<void> {
    clearInterval(this.timer);
    const deadline = Date.now() + timeoutMs;
    while (this.pending.size > 0 && Date.now() < deadline) await Promise.race([...this.pending, sleep(500)]);
    this.stopped = true;
  }

  /** Events made per second since the start. */
  achievedRate(): number {
    return this.events.length / ((Date.now() - this.startedAt) / 1000);
  }

  private produce(): void {
    const n = this.events.length;
    const event: ProducedEvent = {
      n,
      group: n % this.options.groups,
      createdAt: Date.now(),
      acceptedAt: undefined,
      posts: 0,
    };
    this.events.push(event);
    const body = JSON.stringify({
      specversion: '1.0',
      id: `${this.options.idPrefix}-${n}`,
      source: 'fault-suite',
      type: 'greeting',
      data: { name: `g${event.group}`, n },
    });
    const posting = this.postUntilAccepted(event, body).finally(() => this.pending.delete(posting));
    this.pending.add(posting);
  }

  private async postUntilAccepted(event: ProducedEvent, body: string): Promise<void> {
    const { publishers } = this.options;
    while (!this.stopped) {
      const url = publishers[(event.n + event.posts) % publishers.length]!;
      event.posts++;
      const failure = await this.post(url, body);
      if (failure === undefined) {
        event.acceptedAt = Date.now();
        return;
      }
      this.failures.set(failure, (this.failures.get(failure) ?? 0) + 1);
      // The other publisher at once; after that, back off a little (up to 1 s) while both fail.
      if (event.posts >= publishers.length) await sleep(Math.min(1000, 100 * 2 ** (event.posts - 2)));
    }
  }

  /** One post: undefined when accepted, else what went wrong. */
  private async post(url: string, body: string): Promise<string | undefined> {
    try {
      const res = await fetch(`${url}/_gw/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/cloudevents+json' },
        body,
        signal: AbortSignal.timeout(this.options.postTimeoutMs),
      });
      await res.body?.cancel();
      return res.status === 202 ? undefined : String(res.status);
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      return cause ?? (err as Error).name;
    }
  }
}
