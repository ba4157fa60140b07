/**
 * A connection made of `fetch` requests (SSE, long-polling): one abort for all of them, one end
 * reported once, and any failure of its work (the network, a cut, an answer that does not parse)
 * ends it as dropped.
 */
import type { OpenConnection, TransportEnd, TransportHandlers } from './transport.ts';

export class FetchConnection implements OpenConnection {
  readonly abort = new AbortController();
  /** Ended or closed: nothing more is reported. */
  over = false;
  private readonly handlers: TransportHandlers;

  constructor(handlers: TransportHandlers) {
    this.handlers = handlers;
  }

  run(work: (conn: FetchConnection) => Promise<void>): this {
    work(this).catch((err: unknown) =>
      this.end({ kind: 'dropped', reason: String((err as Error)?.message ?? err) }),
    );
    return this;
  }

  end(end: TransportEnd): void {
    if (this.over) return;
    this.over = true;
    this.abort.abort();
    this.handlers.end(end);
  }

  close(): void {
    this.over = true;
    this.abort.abort();
  }
}
