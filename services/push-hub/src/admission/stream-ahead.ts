/**
 * Waiting for this replica to read the fan-out stream up to a resume position it has not read yet:
 * a client moved from a replica that reads ahead of this one (one draining in a rolling restart,
 * while this one takes its clients and reads late under load) carries the position of an event
 * this replica reads a moment later. Without the wait that position is not in the ring and the
 * reconnect counts as a new connection (reconnect-evidence.ts).
 *
 * Only a position of the epoch of the ring's newest event and past it waits, at most `maxWaitMs`;
 * a malformed one, one of another epoch, or any while the ring is empty is answered at once. The
 * waiting connects are kept by position (the clients of a replica share few), and one timer looks
 * at the ring's newest event while any wait: no timer per connect in a reconnect storm.
 */

export interface StreamAheadSources {
  /** Position of the ring's newest event, undefined while it has none. */
  head(): string | undefined;
  /** Orders two positions of the stream; throws for a malformed one. */
  compare(a: string, b: string): number;
  /** The epoch a position carries (the stream's incarnation), when the bus has them. */
  epochOf(position: string): string | undefined;
  /** How long a connect waits at most. */
  maxWaitMs: number;
  /** How often the ring's newest event is looked at while connects wait. */
  pollMs?: number;
}

/**
 * Undefined when `position` is not ahead of this replica; else a promise that resolves once the
 * ring's newest event reaches it, or once `maxWaitMs` have passed.
 */
export type WaitForPosition = (position: string) => Promise<void> | undefined;

interface Waiter {
  deadline: number;
  resolve(): void;
}

export function createStreamAhead(sources: StreamAheadSources): WaitForPosition {
  const pollMs = sources.pollMs ?? 20;
  const waiting = new Map<string, Waiter[]>();
  let timer: NodeJS.Timeout | undefined;

  const isAhead = (position: string, head: string | undefined): boolean => {
    if (head === undefined) return false;
    try {
      return sources.epochOf(position) === sources.epochOf(head) && sources.compare(position, head) > 0;
    } catch {
      return false; // malformed: it will never be read
    }
  };

  /** The ring's newest event at the last look: positions are compared again only once it moved. */
  let lookedAt: string | undefined;

  const look = () => {
    const head = sources.head();
    const moved = head !== lookedAt;
    lookedAt = head;
    const now = Date.now();
    for (const [position, waiters] of waiting) {
      // Made-up positions from many connects cost a comparison each only when the stream moved.
      if (moved && !isAhead(position, head)) {
        for (const w of waiters) w.resolve();
        waiting.delete(position);
        continue;
      }
      // Appended in the order they came, so the earliest deadlines are first.
      while (waiters.length > 0 && waiters[0]!.deadline <= now) waiters.shift()!.resolve();
      if (waiters.length === 0) waiting.delete(position);
    }
    if (waiting.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  return (position) => {
    if (!isAhead(position, sources.head())) return undefined;
    const { promise, resolve } = Promise.withResolvers<void>();
    const waiters = waiting.get(position);
    const waiter = { deadline: Date.now() + sources.maxWaitMs, resolve };
    if (waiters) waiters.push(waiter);
    else waiting.set(position, [waiter]);
    if (!timer) {
      lookedAt = undefined;
      timer = setInterval(look, pollMs);
      timer.unref();
    }
    return promise;
  };
}
