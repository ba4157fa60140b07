/**
 * WebSocket: `GET /_gw/v1/connection/ws` (upgrade). One text frame per event with the CloudEvent
 * JSON; server pings keep the connection alive and detect dead peers (no idle time-out otherwise).
 * The endpoint is one-way: a client frame closes the connection (1003). A rejected connect is
 * upgraded and then closed with code 4000 + the HTTP status (4400 bad request, 4403 denied,
 * 4429 rate limited, 4503 store unavailable) and the reason as payload, except at a connection cap
 * (MAX_CONNECTIONS_PER_ADDRESS, MAX_CONNECTIONS), where the upgrade itself is refused with an HTTP
 * 429 or 503 and Retry-After, before anything is spent on it; a session kill closes with
 * 1000 `Session killed.`; the end of the JWT the connection was admitted with with 4401
 * `Session expired.` (reconnect with a fresh one); a replica that stops closes with 1012 (Service
 * Restart): reconnect and resume elsewhere. A client too slow to read is dropped without a close
 * handshake (it would not read one).
 *
 * Resume: with `?positions=true`, every stream event carries its position as the CloudEvents
 * extension attribute `gwposition`, and the hub's own events theirs as `gwcontrol` (the mark of the
 * hub's own events, positionedPayloadOf); a client reconnecting with `?lastEventId=<position>` (or
 * a `Last-Event-ID` header) gets what it missed, from whichever replica it reaches.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { requestPath } from '@gatehouse/service-kit';
import { type WebSocket, WebSocketServer } from 'ws';
import type { CloseReason, Connection, OutgoingEvent } from '../connections/index.ts';
import type { EndReason } from '../lifecycle/index.ts';
import { newConnectionId } from '../auth/index.ts';
import { queryOf, readConnectRequest } from '../admission/index.ts';
import { refusalOf } from '../subscriptions/index.ts';
import { oncePerEvent } from './once-per-event.ts';
import { refuseUpgrade } from './upgrade-refusal.ts';
import { addAdmitted, type TransportContext } from './transport-context.ts';
import { WriteDrain } from './write-drain.ts';

export const WS_PATH = '/_gw/v1/connection/ws';

const closeFor: Record<CloseReason, [number, string]> = {
  session_killed: [1000, 'Session killed.'],
  session_expired: [4401, 'Session expired.'],
  shutdown: [1012, 'Service restart.'],
  slow_consumer: [1008, 'Client too slow.'],
  unavailable: [1013, 'Try again later.'],
  // 4000 + 410 Gone: the client's own refusal code range, so it does not come back by itself.
  disconnected: [4410, 'Disconnected.'],
  reconnect_advised: [1012, 'Disconnected; reconnect.'],
};

class WsConnection implements Connection {
  readonly transport = 'ws' as const;
  sessionId: string | undefined;
  readonly id: string;
  alive = true;
  eventsWritten = 0;
  private readonly ws: WebSocket;
  private readonly highWater: number;
  private readonly positions: boolean;
  /** Whether the client asked for heartbeat frames (with positions: they are marked as the hub's). */
  readonly heartbeats: boolean;
  private drain: WriteDrain | undefined;

  constructor(id: string, ws: WebSocket, highWater: number, positions: boolean, heartbeats: boolean) {
    this.id = id;
    this.ws = ws;
    this.highWater = highWater;
    this.positions = positions;
    this.heartbeats = positions && heartbeats;
  }

  /** A sign of life the client can see; skipped while frames wait (those will be the sign). */
  heartbeat(): void {
    if (this.ws.bufferedAmount === 0) this.ws.send(heartbeatFrame, asText);
  }

  send(e: OutgoingEvent): boolean {
    this.eventsWritten++;
    const payload = this.positions ? positionedPayloadOf(e) : payloadOf(e);
    if (this.ws.bufferedAmount + payload.length < this.highWater) {
      this.ws.send(payload, asText);
      return true;
    }
    // ws calls back once the frame is written to the socket, and so every frame before it.
    this.drain ??= new WriteDrain();
    this.ws.send(payload, asText, this.drain.written());
    return false;
  }

  queuedBytes(): number {
    return this.ws.bufferedAmount;
  }

  whenDrained(ready: () => void): void {
    if (this.drain) this.drain.whenDrained(ready, this.ws.bufferedAmount);
    else setImmediate(ready);
  }

  close(reason: CloseReason): void {
    // A slow consumer does not read: a closing handshake would keep its unsent frames for ws's
    // 30 s close timer, so the connection is dropped at once.
    if (reason === 'slow_consumer') this.ws.terminate();
    else {
      const [code, text] = closeFor[reason];
      this.ws.close(code, text);
    }
  }
}

const asText = { binary: false };

/** The hub's own event (`gwcontrol`, no position) a heartbeat is: the same bytes for everyone. */
const heartbeatFrame = Buffer.from(
  JSON.stringify({
    specversion: '1.0',
    id: 'heartbeat',
    type: 'gw.heartbeat',
    source: 'gatehouse',
    gwcontrol: '',
  }),
);

/**
 * An event's UTF-8 bytes are made once per event and sent as they are (a string would be measured
 * and encoded per connection).
 */
const payloadOf = oncePerEvent((e) => Buffer.from(e.json));

const positionedPayload = oncePerEvent((e) => Buffer.from(withPosition(e.json, e.position!)));
/**
 * With positions, a stream event always ends in the hub's `gwposition` (a producer's own is
 * overridden, never missing), and the hub's own events carry `gwcontrol` (the position, or empty)
 * instead: a client tells them apart by a member no producer can add or take away.
 */
function positionedPayloadOf(e: OutgoingEvent): Buffer {
  if (e.own) return Buffer.from(withMember(e.json, 'gwcontrol', e.position ?? ''));
  return e.position === undefined ? payloadOf(e) : positionedPayload(e);
}

/** Adds `"gwposition":…` as the last member of the event's JSON object (a later key wins on parse). */
export function withPosition(json: string, position: string): string {
  return withMember(json, 'gwposition', position);
}

function withMember(json: string, name: string, value: string): string {
  const end = json.lastIndexOf('}');
  const empty = /^\{\s*$/.test(json.slice(0, end));
  return `${json.slice(0, end)}${empty ? '' : ','}"${name}":${JSON.stringify(value)}}`;
}

/** `maxPayload`: WS_MAX_PAYLOAD_BYTES, a client's message (fragments together) past it closes 1009. */
export function createWsTransport(ctx: TransportContext, maxPayload: number) {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload });
  const open = new Map<WebSocket, WsConnection>();
  // Socket listeners shared by every connection (`this` is the socket), so a connection costs no
  // closures of its own.
  function onClientMessage(this: WebSocket): void {
    ended(this, 'protocol_error');
    this.close(1003, 'This WebSocket endpoint cannot be used for two-way communication.');
  }
  function onError(this: WebSocket, err: Error): void {
    ctx.logger.debug({ err }, 'websocket error');
    ended(this, 'error');
  }
  /** A connection ended for a reason the socket's close alone would not tell (lifecycle events). */
  function ended(ws: WebSocket, reason: EndReason): void {
    const conn = open.get(ws);
    if (!conn) return;
    open.delete(ws);
    ctx.hub.remove(conn, reason);
  }
  function onPong(this: WebSocket): void {
    const conn = open.get(this);
    if (conn) conn.alive = true;
  }
  function onClose(this: WebSocket): void {
    const conn = open.get(this);
    if (!conn) return;
    open.delete(this);
    ctx.hub.remove(conn);
  }
  const timer = setInterval(() => {
    for (const [ws, conn] of open) {
      if (!conn.alive) {
        ended(ws, 'idle_timeout');
        ws.terminate();
        continue;
      }
      conn.alive = false;
      ws.ping();
      if (conn.heartbeats) conn.heartbeat();
    }
  }, ctx.heartbeatMs);
  timer.unref();

  async function accept(ws: WebSocket, req: IncomingMessage): Promise<void> {
    ws.on('message', onClientMessage);
    ws.on('error', onError);
    let connectReq: ReturnType<typeof readConnectRequest>;
    let resolved: Awaited<ReturnType<TransportContext['gate']>>;
    try {
      connectReq = readConnectRequest(req, ctx.bearerTokens);
      resolved = await ctx.gate('ws', connectReq, req);
    } catch (err) {
      const refusal = refusalOf(err);
      if (!refusal) ctx.logger.error({ err }, 'websocket connect failed');
      ws.close(4000 + (refusal?.status ?? 500), truncateReason(refusal?.message ?? 'Internal error.'));
      return;
    }
    if (ws.readyState !== ws.OPEN) return;
    const id = newConnectionId();
    const query = queryOf(req.url ?? '/');
    const conn = new WsConnection(
      id,
      ws,
      ctx.writeHighWater,
      query.get('positions') === 'true',
      query.get('heartbeat') === 'true',
    );
    conn.sessionId = resolved.sessionId;
    open.set(ws, conn);
    ws.on('pong', onPong);
    ws.on('close', onClose);
    addAdmitted(ctx, conn, resolved, connectReq.resumeFrom, connectReq);
  }

  // The socket holds the connection's place from the upgrade until it closes, however it ends.
  function releasePlace(this: Duplex): void {
    ctx.places.release(this);
  }

  return {
    upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
      if (requestPath(req) !== WS_PATH) return false;
      // Browsers apply no CORS to WebSockets: the allow-list is enforced here.
      if (!ctx.cors.permitsUpgrade(req.headers.origin)) {
        socket.end(
          'HTTP/1.1 403 Forbidden\r\nconnection: close\r\nx-content-type-options: nosniff\r\ncontent-length: 0\r\n\r\n',
        );
        return true;
      }
      const full = ctx.takePlace('ws', socket, req);
      if (full) {
        refuseUpgrade(socket, full);
        return true;
      }
      socket.on('close', releasePlace);
      if (socket.destroyed) ctx.places.release(socket);
      wss.handleUpgrade(req, socket, head, (ws) => {
        accept(ws, req).catch((err) => ctx.logger.error({ err }, 'websocket accept failed'));
      });
      return true;
    },
    close(): void {
      clearInterval(timer);
      wss.close();
    },
  };
}

/** Close reasons may hold at most 123 bytes. */
function truncateReason(text: string): string {
  const buf = Buffer.from(text);
  return buf.length <= 123
    ? text
    : `${buf
        .subarray(0, 120)
        .toString()
        .replace(/\uFFFD$/, '')}...`;
}
