/**
 * An HTTP/1.1 Upgrade (a WebSocket) forwarded to an HTTP target, as nginx and Kong do: the request
 * goes up with `Connection: upgrade` and the client's `Upgrade`; when the target switches
 * protocols its 101 goes back to the client (minus hop-by-hop headers, forward-headers.ts, with
 * `Connection`/`Upgrade` set again) and from then on the bytes are piped both ways until either
 * side closes, so WebSocket frames, close codes included, pass untouched.
 *
 * Outcomes: `upgraded` (the tunnel is open), `refused` (the target answered without switching:
 * 502), `unreachable` (no connection, reset, no connect within the connect time-out: 502),
 * `target_refused` (its address is not one PROXY_TARGET_ALLOW lets through, target-connect.ts: 502),
 * `timeout` (no answer within the headers time-out: 504) and `client_gone`.
 */
import { type IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { downstreamHeaders, type HeaderMap } from './forward-headers.ts';
import type { TargetAllowList } from './target-allow-list.ts';
import { guardedLookup, refusalOfLiteral, TargetRefusedError } from './target-connect.ts';

export type UpgradeOutcome =
  | { kind: 'upgraded' }
  | { kind: 'refused'; status: number }
  | { kind: 'unreachable'; error: Error }
  | { kind: 'target_refused'; error: TargetRefusedError }
  | { kind: 'timeout' }
  | { kind: 'client_gone' };

export interface UpgradeRequest {
  req: IncomingMessage;
  /** The client's socket, as the server's `upgrade` event hands it over. */
  socket: Duplex;
  /** Bytes the client sent after its request head. */
  head: Buffer;
  /** `scheme://host:port` of the target. */
  origin: string;
  /** Path and query string. */
  path: string;
  /** The forwarded request headers (upstreamHeaders): Connection and Upgrade are added here. */
  headers: HeaderMap;
  /** How long the target may take to answer the upgrade. */
  headersTimeoutMs: number;
}

export interface UpgradeForwarderOptions {
  connectTimeoutMs: number;
  /** An open tunnel with no bytes either way for this long is closed (0: never). */
  idleTimeoutMs: number;
  /** Where targets may be (PROXY_TARGET_ALLOW), checked on the address each connection goes to. */
  targets: TargetAllowList;
}

export class UpgradeForwarder {
  private readonly options: UpgradeForwarderOptions;
  private readonly tunnels = new Set<Tunnel>();

  constructor(options: UpgradeForwarderOptions) {
    this.options = options;
  }

  /** Tunnels open now. */
  get size(): number {
    return this.tunnels.size;
  }

  forward(r: UpgradeRequest): Promise<UpgradeOutcome> {
    // The target is the configured origin; the path is only ever the request line's path, never
    // resolved against the origin (`new URL('//other:1/', origin)` is another host).
    const origin = new URL(r.origin);
    if (!r.path.startsWith('/') || r.path.startsWith('//'))
      return Promise.resolve({ kind: 'unreachable', error: new Error('upstream path is not absolute') });
    const refused = refusalOfLiteral(this.options.targets, origin.hostname);
    if (refused !== undefined) return Promise.resolve({ kind: 'target_refused', error: refused });
    return new Promise((resolve) => {
      const secure = origin.protocol === 'https:';
      const upstream = (secure ? httpsRequest : httpRequest)({
        protocol: origin.protocol,
        hostname: origin.hostname.replace(/^\[|\]$/g, ''),
        port: origin.port,
        path: r.path,
        method: r.req.method ?? 'GET',
        headers: { ...r.headers, connection: 'upgrade', upgrade: r.req.headers.upgrade ?? 'websocket' },
        // One connection per tunnel: it leaves any pool once it is upgraded anyway.
        agent: false,
        lookup: guardedLookup(this.options.targets),
      });
      let timedOut = false;
      let clientGone = false;
      let timer = setTimeout(
        () => upstream.destroy(new Error('connect timed out')),
        this.options.connectTimeoutMs,
      );
      upstream.once('socket', (s: Socket) =>
        s.once(secure ? 'secureConnect' : 'connect', () => {
          clearTimeout(timer);
          timer = setTimeout(() => {
            timedOut = true;
            upstream.destroy(new Error('upgrade answer timed out'));
          }, r.headersTimeoutMs);
        }),
      );
      const onClientClose = () => {
        clientGone = true;
        upstream.destroy(new Error('client closed the connection'));
      };
      r.socket.once('close', onClientClose);
      const settle = (outcome: UpgradeOutcome) => {
        clearTimeout(timer);
        r.socket.off('close', onClientClose);
        resolve(outcome);
      };
      upstream.once('upgrade', (res: IncomingMessage, target: Socket, targetHead: Buffer) => {
        settle({ kind: 'upgraded' });
        this.open(r, res, target, targetHead);
      });
      upstream.once('response', (res: IncomingMessage) => {
        res.resume();
        upstream.destroy();
        settle({ kind: 'refused', status: res.statusCode ?? 0 });
      });
      upstream.once('error', (error: Error) => {
        if (clientGone) settle({ kind: 'client_gone' });
        else if (timedOut) settle({ kind: 'timeout' });
        else if (error instanceof TargetRefusedError) settle({ kind: 'target_refused', error });
        else settle({ kind: 'unreachable', error });
      });
      upstream.end();
    });
  }

  /** Lets open tunnels finish; after `timeoutMs` cuts the rest. */
  async close(timeoutMs: number): Promise<void> {
    if (this.tunnels.size === 0) return;
    const all = [...this.tunnels].map((t) => t.closed);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((r) => {
      timer = setTimeout(() => r('late'), timeoutMs);
    });
    const result = await Promise.race([Promise.all(all), late]);
    clearTimeout(timer);
    if (result === 'late') for (const t of this.tunnels) t.cut();
  }

  private open(r: UpgradeRequest, res: IncomingMessage, target: Socket, targetHead: Buffer): void {
    const client = r.socket;
    if (client.destroyed) {
      target.destroy();
      return;
    }
    client.write(switchingProtocols(res));
    if (targetHead.length > 0) client.write(targetHead);
    if (r.head.length > 0) target.write(r.head);
    const tunnel = new Tunnel(client, target, this.options.idleTimeoutMs);
    this.tunnels.add(tunnel);
    void tunnel.closed.then(() => this.tunnels.delete(tunnel));
  }
}

/** The target's 101, as the client gets it. */
function switchingProtocols(res: IncomingMessage): string {
  const headers: HeaderMap = {
    ...downstreamHeaders(res.headers),
    connection: 'Upgrade',
    upgrade: res.headers.upgrade ?? 'websocket',
  };
  let head = `HTTP/1.1 101 ${res.statusMessage || 'Switching Protocols'}\r\n`;
  for (const [name, value] of Object.entries(headers))
    for (const v of Array.isArray(value) ? value : [value]) head += `${name}: ${v}\r\n`;
  return `${head}\r\n`;
}

/**
 * Both directions piped until either side closes: an end is passed on (a WebSocket's closing
 * handshake finishes), then the other side is closed too; an error on one side destroys both.
 */
class Tunnel {
  readonly closed: Promise<void>;
  private readonly a: Duplex;
  private readonly b: Duplex;

  constructor(a: Duplex, b: Duplex, idleTimeoutMs: number) {
    this.a = a;
    this.b = b;
    for (const s of [a, b]) (s as Partial<Socket>).setNoDelay?.(true);
    a.pipe(b);
    b.pipe(a);
    a.on('error', () => b.destroy());
    b.on('error', () => a.destroy());
    a.once('close', () => closeAfterWrites(b));
    b.once('close', () => closeAfterWrites(a));
    let idle: NodeJS.Timeout | undefined;
    if (idleTimeoutMs > 0) {
      idle = setTimeout(() => this.cut(), idleTimeoutMs);
      const active = () => idle?.refresh();
      a.on('data', active);
      b.on('data', active);
    }
    const closedOne = (s: Duplex) => new Promise<void>((r) => (s.destroyed ? r() : s.once('close', r)));
    this.closed = Promise.all([closedOne(a), closedOne(b)]).then(() => clearTimeout(idle));
  }

  cut(): void {
    this.a.destroy();
    this.b.destroy();
  }
}

/** Ends the socket once what was written to it is flushed (destroySoon), or at once when it cannot. */
function closeAfterWrites(s: Duplex): void {
  const socket = s as Partial<Socket>;
  if (typeof socket.destroySoon === 'function') socket.destroySoon();
  else s.end();
}
