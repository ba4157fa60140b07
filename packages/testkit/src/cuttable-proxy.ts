/**
 * A TCP proxy in front of a server, which a test can cut: every connection through it is dropped and
 * new ones are refused until it is restored. It cuts one process off (a hub from Redis) while the
 * server and everyone else go on, and tells when connections came back after a restore. It can also
 * play a proxy that blocks some requests (a WebSocket upgrade, a path): a connection whose client
 * sends bytes that match a blocked pattern is dropped before they reach the server. And it can play
 * a NAT that forgot its connections (`silence`): they stay open at both ends but carry nothing more,
 * with neither a FIN nor a RST, while new connections pass. And it can hold a request up (`delayOnce`),
 * as a full accept queue in front of a starved server does: the bytes reach it late, then flow.
 */
import { createServer, type Server, type Socket, connect } from 'node:net';

export class CuttableProxy {
  readonly port: number;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  /** The connections `silence` took: nothing passes through them any more. */
  private readonly silenced = new WeakSet<Socket>();
  private open = true;
  /** When each connection was accepted (ms since the epoch). */
  readonly acceptedAt: number[] = [];
  /** Patterns of client bytes (latin1 text) that get a connection dropped. */
  readonly blocked = new Set<RegExp>();
  /** How many connections a blocked pattern dropped, by pattern. */
  readonly blockedCount = new Map<RegExp, number>();
  /**
   * Patterns of client bytes that hang a connection: those bytes and everything after them are
   * swallowed, and the connection stays open (a proxy that holds WebSocket upgrades for ever).
   */
  readonly hung = new Set<RegExp>();
  /** One-shot holds (`delayOnce`): the pattern and for how long. */
  private readonly delays: Array<{ pattern: RegExp; ms: number }> = [];
  /** Client bytes waiting out a hold, by connection, in order. */
  private readonly held = new WeakMap<Socket, Buffer[]>();

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

  /** The connections open now carry nothing more, in either direction, and are never closed by it. */
  silence(): void {
    for (const s of this.sockets) this.silenced.add(s);
  }

  /** The next client bytes that match `pattern` reach the server `ms` later (so does what follows them). */
  delayOnce(pattern: RegExp, ms: number): void {
    this.delays.push({ pattern, ms });
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
        // A forgotten connection's end reaches nobody: the other side stays open, hearing nothing.
        if (this.silenced.has(s)) return;
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      if (this.silenced.has(client)) return;
      const text = chunk.toString('latin1');
      if ([...this.hung].some((pattern) => pattern.test(text))) {
        this.silenced.add(client);
        this.silenced.add(upstream);
        return;
      }
      if (this.hold(client, upstream, chunk, text)) return;
      const hit = [...this.blocked].find((pattern) => pattern.test(text));
      if (hit) {
        this.blockedCount.set(hit, (this.blockedCount.get(hit) ?? 0) + 1);
        client.destroy();
        upstream.destroy();
      } else upstream.write(chunk);
    });
    client.on('end', () => {
      if (!this.silenced.has(client) && !this.held.has(client)) upstream.end();
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!this.silenced.has(upstream)) client.write(chunk);
    });
    upstream.on('end', () => {
      if (!this.silenced.has(upstream)) client.end();
    });
  }

  /** Whether `chunk` waits: behind a hold of this connection, or starting one that `delayOnce` set. */
  private hold(client: Socket, upstream: Socket, chunk: Buffer, text: string): boolean {
    const queue = this.held.get(client);
    if (queue) return queue.push(chunk) > 0;
    const at = this.delays.findIndex((d) => d.pattern.test(text));
    if (at < 0) return false;
    const { ms } = this.delays.splice(at, 1)[0]!;
    this.held.set(client, [chunk]);
    setTimeout(() => {
      const chunks = this.held.get(client) ?? [];
      this.held.delete(client);
      for (const c of chunks) upstream.write(c);
    }, ms);
    return true;
  }
}
