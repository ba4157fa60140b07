/**
 * Requests waiting on this replica for a correlated response (response_from kafka, http_async,
 * kinesis). Each gets a correlation id: an authenticated token naming this replica and a local id
 * (auth's SignedTokenCodec), so any replica can tell where a response must go and a forged or
 * altered id is refused. A request not answered in time resolves undefined (the caller answers 504).
 *
 * The local id is a random epoch drawn at each start of the process, then a counter: a replica that
 * restarts under the same name (a pod name) never hands out an id of its previous life, so a late
 * response for a request of before the crash finds nobody instead of a stranger's request.
 */
import { randomBytes } from 'node:crypto';
import type { SignedTokenCodec, SignedTokenPayload } from '@gatehouse/auth';

export interface CorrelatedResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface PendingRequest {
  correlation: string;
  /** The response, or undefined after the time-out or cancel(). */
  response: Promise<CorrelatedResponse | undefined>;
  cancel(): void;
}

interface Waiter {
  resolve(response: CorrelatedResponse | undefined): void;
  timer: NodeJS.Timeout;
}

export class PendingResponses {
  private readonly codec: SignedTokenCodec;
  private readonly replica: string;
  private readonly waiters = new Map<string, Waiter>();
  private readonly epoch = randomBytes(6).toString('base64url');
  private next = 0;

  constructor(codec: SignedTokenCodec, replica: string) {
    this.codec = codec;
    this.replica = replica;
  }

  get size(): number {
    return this.waiters.size;
  }

  open(timeoutMs: number): PendingRequest {
    const id = `${this.epoch}.${(++this.next).toString(36)}`;
    let resolve!: (response: CorrelatedResponse | undefined) => void;
    const response = new Promise<CorrelatedResponse | undefined>((r) => {
      resolve = r;
    });
    const finish = (value: CorrelatedResponse | undefined) => {
      const waiter = this.waiters.get(id);
      if (waiter === undefined) return;
      clearTimeout(waiter.timer);
      this.waiters.delete(id);
      resolve(value);
    };
    this.waiters.set(id, { resolve: finish, timer: setTimeout(() => finish(undefined), timeoutMs) });
    return {
      // The token outlives the wait by a little: a late response is told "not waiting", not "forged".
      correlation: this.codec.encode({
        replica: this.replica,
        id,
        expiresAt: Date.now() + timeoutMs + 60_000,
      }),
      response,
      cancel: () => finish(undefined),
    };
  }

  /** Completes the request with this local id; false when none is waiting (answered, timed out). */
  deliver(id: string, response: CorrelatedResponse): boolean {
    const waiter = this.waiters.get(id);
    if (waiter === undefined) return false;
    waiter.resolve(response);
    return true;
  }

  /** The owner and local id of a correlation id, or undefined when it is not authentic or expired. */
  decode(correlation: string): SignedTokenPayload | undefined {
    return this.codec.decode(correlation);
  }

  get replicaId(): string {
    return this.replica;
  }

  /** Ends every wait (shutdown): the clients get their 504 now rather than a cut connection. */
  cancelAll(): void {
    for (const waiter of [...this.waiters.values()]) waiter.resolve(undefined);
  }
}
