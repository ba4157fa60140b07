/**
 * A TCP relay in front of the public edge for the demo page: its client connects through it, and
 * `cut()` destroys every connection it carries, as a dropped network would (no close frame, no
 * last chunk), so the page shows the client coming back and resuming.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface CutRelay {
  port: number;
  /** Destroys every relayed connection; resolves with how many client connections there were. */
  cut(): number;
  close(): Promise<void>;
}

/** `target` is asked at each connection: undefined until the edge listens (the client is refused). */
export async function startCutRelay(
  target: () => { host: string; port: number } | undefined,
  host: string,
  port: number,
): Promise<CutRelay> {
  const pairs = new Set<[Socket, Socket]>();
  const server: Server = createServer((client) => {
    const to = target();
    if (to === undefined) {
      client.destroy();
      return;
    }
    const upstream = createConnection(to);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => resolve());
  });
  const relay: CutRelay = {
    port: (server.address() as { port: number }).port,
    cut() {
      const count = pairs.size;
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      pairs.clear();
      return count;
    },
    close() {
      relay.cut();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  return relay;
}
