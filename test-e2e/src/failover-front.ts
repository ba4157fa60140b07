/**
 * One address in front of several replicas, as a cloud load balancer with health checks is for a
 * client that knows one URL: each TCP connection goes to the first replica, in the given order,
 * that accepts it. A replica that was killed refuses connections, so a client's reconnect lands
 * on the next one without the test telling anybody. Plain TCP: HTTP, SSE and WebSocket pass as they are.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export class FailoverFront {
  readonly url: string;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  private constructor(server: Server, port: number) {
    this.server = server;
    this.url = `http://127.0.0.1:${port}`;
  }

  /** `targets`: `http://host:port` URLs, the preferred first. */
  static async start(targets: string[]): Promise<FailoverFront> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const front = new FailoverFront(server, (server.address() as { port: number }).port);
    const addresses = targets.map((t) => new URL(t));
    server.on('connection', (client) => front.forward(client, addresses));
    return front;
  }

  private forward(client: Socket, targets: URL[], index = 0): void {
    this.track(client);
    client.pause();
    const target = targets[index];
    if (!target) {
      client.destroy();
      return;
    }
    const upstream = connect({ host: target.hostname, port: Number(target.port) });
    this.track(upstream);
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    // Refused before it connected: the replica is down, the next one is asked.
    upstream.on('error', () => {
      if (!connected && !client.destroyed) this.forward(client, targets, index + 1);
      else client.destroy();
    });
    upstream.on('close', () => {
      if (connected) client.destroy();
    });
    client.on('close', () => upstream.destroy());
  }

  private track(socket: Socket): void {
    if (this.sockets.has(socket)) return;
    this.sockets.add(socket);
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.sockets.delete(socket));
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
