/**
 * A TCP proxy in front of a server, which a test can cut: every connection through it is dropped and
 * new ones are refused until it is restored. It cuts one process off (a hub from Redis) while the
 * server and everyone else go on, and tells when connections came back after a restore.
 */
import { createServer, type Server, type Socket, connect } from 'node:net';

export class CuttableProxy {
  readonly port: number;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private open = true;
  /** When each connection was accepted (ms since the epoch). */
  readonly acceptedAt: number[] = [];

  private constructor(server: Server, port: number) {
    this.server = server;
    this.port = port;
  }

  static async start(target: { host: string; port: number }): Promise<CuttableProxy> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxy = new CuttableProxy(server, (server.address() as { port: number }).port);
    server.on('connection', (client) => proxy.accept(client, target));
    return proxy;
  }

  /** Drops every connection and refuses new ones. */
  cut(): void {
    this.open = false;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  restore(): void {
    this.open = true;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, target: { host: string; port: number }): void {
    if (!this.open) {
      client.destroy();
      return;
    }
    this.acceptedAt.push(Date.now());
    const upstream = connect(target);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        this.sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
