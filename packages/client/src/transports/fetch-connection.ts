/**
 * A connection made of `fetch` requests (SSE, long-polling): one abort for all of them, one end
 * reported once, and any failure of its work (the network, a cut, an answer that does not parse)
 * ends it as dropped. A connection that hears nothing for `idleMs` (a network that died without a
 * FIN or RST: a laptop that slept, a NAT that forgot it) ends as dropped too: the gateway's SSE
 * heartbeat and long-poll window keep a live one talking well within it.
 */
import type { OpenConnection, TransportEnd, TransportHandlers } from './transport.ts';

export class FetchConnection implements OpenConnection {
  readonly abort = new AbortController();
  /** Ended or closed: nothing more is reported. */
  over = false;
  private readonly handlers: TransportHandlers;
  private readonly idleMs: number;
  private idle: ReturnType<typeof setTimeout> | undefined;

  constructor(handlers: TransportHandlers, idleMs: number) {
    this.handlers = handlers;
    this.idleMs = idleMs;
    this.alive();
  }

  /** Something arrived: the idle clock starts again. */
  alive(): void {
    clearTimeout(this.idle);
    if (this.over) return;
    this.idle = setTimeout(
      () => this.end({ kind: 'dropped', code: 'idle', reason: `nothing received for ${this.idleMs} ms` }),
      this.idleMs,
    );
  }

  run(work: (conn: FetchConnection) => Promise<void>): this {
    work(this).catch((err: unknown) =>
      this.end({ kind: 'dropped', code: 'network', reason: describe(err), cause: err }),
    );
    return this;
  }

  end(end: TransportEnd): void {
    if (this.over) return;
    this.close();
    this.handlers.end(end);
  }

  close(): void {
    this.over = true;
    clearTimeout(this.idle);
    this.abort.abort();
  }
}

/**
 * A platform error in words, with its cause's: `fetch failed` alone hides why (Node puts the
 * refused connect, the DNS failure or the TLS error in `cause`).
 */
function describe(err: unknown): string {
  const message = String((err as Error)?.message ?? err);
  const cause = (err as { cause?: { code?: unknown; message?: unknown } })?.cause;
  const why = cause?.code ?? cause?.message;
  return why === undefined ? message : `${message} (${String(why)})`;
}
