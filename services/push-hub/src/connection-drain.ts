/**
 * Moving a stopping replica's clients away without a reconnect storm. Closing every connection at
 * once would send all of its clients to the other replicas in the same instant (and, with many
 * replicas rolling, into the connection rate limit). Instead the connections are closed in equal
 * batches, one every `tickMs`, spread over `spreadMs`; the ones still open keep receiving events
 * meanwhile. Each transport tells its client to come back (SSE `retry:` with jitter, WebSocket 1012,
 * socket.io a transport close its client reconnects from), and the client resumes from its last
 * position on whichever replica it reaches.
 */
import type { Hub } from './hub.ts';

export interface DrainOptions {
  /** The time over which the batches are spread; 0 closes everything at once. */
  spreadMs: number;
  tickMs?: number;
  /** Told how many connections each batch closed. */
  onBatch?: (closed: number) => void;
}

/** Closes every connection the hub holds now, in batches; resolves with how many it closed. */
export async function drainConnections(hub: Hub, options: DrainOptions): Promise<number> {
  const tickMs = options.tickMs ?? 100;
  const conns = hub.held();
  const ticks = Math.max(1, Math.floor(options.spreadMs / tickMs));
  let next = 0;
  let closed = 0;
  for (let tick = 1; tick <= ticks && next < conns.length; tick++) {
    const end = Math.ceil((conns.length * tick) / ticks);
    let batch = 0;
    for (; next < end; next++) if (hub.close(conns[next]!, 'shutdown')) batch++;
    closed += batch;
    options.onBatch?.(batch);
    if (tick < ticks && next < conns.length) await new Promise((r) => setTimeout(r, tickMs));
  }
  return closed;
}
