/**
 * Waiting for this replica to read the fan-out stream up to a resume position it has not read yet:
 * a client moved from a replica that reads ahead of this one (one draining in a rolling restart,
 * while this one takes its clients and reads late under load) carries the position of an event
 * this replica reads a moment later. Without the wait that position is not in the ring and the
 * reconnect counts as a new connection (reconnect-evidence.ts).
 *
 * Only a position of the epoch of the ring's newest event and past it waits, at most `maxWaitMs`;
 * a malformed one, one of another epoch, or any while the ring is empty is answered at once, and so
 * is any past `maxWaiting` connects waiting at once (RESUME_AHEAD_MAX_WAITING): positions are the
 * client's text, and made-up ones far ahead would otherwise wait out the whole time, as many as
 * were sent. One timer looks at the ring's newest event while any wait, and costs what it resolves:
 * the waiters are kept lowest position first (a heap) and in the order they came, which is the
 * order of their deadlines (the wait is the same for all); one never reached costs nothing until
 * its deadline.
 */
import TinyQueue from 'tinyqueue';

export interface StreamAheadSources {
  /** Position of the ring's newest event, undefined while it has none. */
  head(): string | undefined;
  /** Orders two positions of the stream; throws for a malformed one. */
  compare(a: string, b: string): number;
  /** The epoch a position carries (the stream's incarnation), when the bus has them. */
  epochOf(position: string): string | undefined;
  /** How long a connect waits at most. */
  maxWaitMs: number;
  /** Connects waiting at once, at most; another is answered at once (RESUME_AHEAD_MAX_WAITING). */
  maxWaiting: number;
  /** How often the ring's newest event is looked at while connects wait. */
  pollMs?: number;
  /** A monotonic clock in ms. */
  now?: () => number;
}

/**
 * Undefined when `position` is not ahead of this replica (or too many wait); else a promise that
 * resolves once the ring's newest event reaches it, or once `maxWaitMs` have passed.
 */
export type WaitForPosition = (position: string) => Promise<void> | undefined;

interface Waiter {
  position: string;
  deadline: number;
  resolve(): void;
  done: boolean;
}

export function createStreamAhead(sources: StreamAheadSources): WaitForPosition {
  const pollMs = sources.pollMs ?? 20;
  const now = sources.now ?? (() => performance.now());
  const byPosition = (items: Waiter[] = []) =>
    new TinyQueue<Waiter>(items, (a, b) => sources.compare(a.position, b.position));
  /** Lowest position first; positions are compared when they come, so each here is well formed. */
  let lowest = byPosition();
  /** In the order they came, which is their deadlines' order; `first` is the oldest not yet taken. */
  let queue: Waiter[] = [];
  let first = 0;
  /** The epoch every waiting position has: that of the ring's newest event when they came. */
  let epoch: string | undefined;
  let waiting = 0;
  let timer: NodeJS.Timeout | undefined;

  const finish = (w: Waiter) => {
    if (w.done) return;
    w.done = true;
    waiting--;
    w.resolve();
  };

  /** Keeps only waiters not done: each is in both orders until both reached it. */
  const compact = () => {
    queue = queue.slice(first).filter((w) => !w.done);
    first = 0;
    lowest = byPosition(queue.slice());
  };

  const look = () => {
    const head = sources.head();
    // The stream was made anew (or the ring emptied): no waiting position will come.
    if (head === undefined || sources.epochOf(head) !== epoch) for (const w of queue) finish(w);
    else {
      for (let w = lowest.peek(); w && (w.done || sources.compare(w.position, head) <= 0); w = lowest.peek())
        finish(lowest.pop()!);
      const t = now();
      for (let w = queue[first]; w && (w.done || w.deadline <= t); w = queue[first]) {
        finish(w);
        first++;
      }
    }
    if (waiting > 0) return;
    clearInterval(timer);
    timer = undefined;
    compact();
  };

  const isAhead = (position: string, head: string | undefined): boolean => {
    if (head === undefined) return false;
    try {
      return sources.epochOf(position) === sources.epochOf(head) && sources.compare(position, head) > 0;
    } catch {
      return false; // malformed: it will never be read
    }
  };

  return (position) => {
    const head = sources.head();
    if (waiting >= sources.maxWaiting || !isAhead(position, head)) return undefined;
    const headEpoch = sources.epochOf(head!);
    if (headEpoch !== epoch) {
      for (const w of queue) finish(w);
      compact();
      epoch = headEpoch;
    }
    // Done ones are dropped from both orders once they outnumber the bound (at most that many wait).
    if (queue.length > 2 * sources.maxWaiting) compact();
    const { promise, resolve } = Promise.withResolvers<void>();
    const waiter: Waiter = { position, deadline: now() + sources.maxWaitMs, resolve, done: false };
    waiting++;
    lowest.push(waiter);
    queue.push(waiter);
    if (!timer) {
      timer = setInterval(look, pollMs);
      timer.unref();
    }
    return promise;
  };
}
