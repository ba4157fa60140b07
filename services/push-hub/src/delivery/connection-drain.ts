/**
 * Moving a stopping replica's clients away without a reconnect storm. Closing every connection at
 * once would send all of its clients to the other replicas in the same instant (and, with many
 * replicas rolling, into the connection rate limit). Instead the connections are closed in batches,
 * one every `tickMs`, spread over `spreadMs`: each batch is an equal share of what is still open over
 * the ticks left, so a stream that came in late (over a connection accepted before the listener
 * closed) is moved away with the others. The ones still open keep receiving events meanwhile. Each
 * transport tells its client to come back (SSE `retry:` with jitter, WebSocket 1012, socket.io a
 * transport close its client reconnects from), and the client resumes from its last position on
 * whichever replica it reaches. Once no connection is left (or there was none), it returns at once.
 */
import type { Hub } from './hub.ts';

export interface DrainOptions {
  /** The time over which the batches are spread; 0 closes everything at once. */
  spreadMs: number;
  tickMs?: number;
  /** Told how many connections each batch closed. */
  onBatch?: (closed: number) => void;
}

/** Closes every connection the hub holds, in batches; resolves with how many it closed. */
export async function drainConnections(hub: Hub, options: DrainOptions): Promise<number> {
  const tickMs = options.tickMs ?? 100;
  const ticks = Math.max(1, Math.floor(options.spreadMs / tickMs));
  let closed = 0;
  for (let tick = 0; tick < ticks; tick++) {
    const open = hub.held();
    // Nothing (left) to move: the replica stops now rather than wait out the window.
    if (open.length === 0) break;
    const share = Math.ceil(open.length / (ticks - tick));
    let batch = 0;
    for (const conn of open.slice(0, share)) if (hub.close(conn, 'shutdown')) batch++;
    closed += batch;
    if (batch > 0) options.onBatch?.(batch);
    if (tick < ticks - 1) await new Promise((r) => setTimeout(r, tickMs));
  }
  return closed;
}
