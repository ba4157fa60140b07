/**
 * socket.io at `/_gw/v1/socket.io/` (its own polling and WebSocket transports). Connect parameters
 * come in the handshake `auth` object or query (`jwt`, `subscriptions`, `lastEventId`) or the
 * Authorization header. Each CloudEvent is emitted with its type as the event name and the event as
 * the argument. A rejected connect fails with `connect_error` whose message is the reason and whose
 * `data.status` is the HTTP status the other transports would answer; a session kill emits
 * `gw.session_killed`, then disconnects, and so does the end of the JWT the connection was admitted
 * with (`gw.session_expired`). A replica that stops (or cannot serve a resume now) closes
 * the connection's transport instead: the socket.io client reconnects by itself, with its offset.
 *
 * Resume: every event with a stream position is emitted with the position as a last, extra
 * argument, and the connect answer carries a session id (`pid`). That is socket.io's own
 * connection-state-recovery protocol, so the socket.io client keeps the last position it got and
 * sends it back (`auth.offset`) when it reconnects, to whichever replica: the hub resumes from it
 * as from `lastEventId`. Handlers that take one argument are unaffected.
 *
 * Connection caps: an engine.io handshake (a request without a session id, polling or WebSocket)
 * takes a place (connection-places.ts) before anything else and is refused with an HTTP 429 or 503
 * and Retry-After at a cap; the engine session it opens holds the place until it closes, whether a
 * socket.io connect ever came over it or not.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { requestPath, sendText } from '@gatehouse/service-kit';
import { type Socket as EngineSocket, Server as EngineServer } from 'engine.io';
import { Server, type Socket } from 'socket.io';
import type { CloseReason, Connection, OutgoingEvent } from '../connections/index.ts';
import type { EndReason } from '../lifecycle/index.ts';
import { type AdmittedConnect, type ConnectRequest, fromParams } from '../admission/index.ts';
import { newConnectionId } from '../auth/index.ts';
import { refusalOf, type SubscriptionRequestError } from '../subscriptions/index.ts';
import { socketIoPreflight } from './cors.ts';
import { EngineOutput } from './engine-output.ts';
import { socketIoFrameOf } from './socketio-frame.ts';
import { refuseUpgrade } from './upgrade-refusal.ts';
import { addAdmitted, type TransportContext } from './transport-context.ts';

export const SOCKETIO_PATH = '/_gw/v1/socket.io/';
const engineMethods = new Set(['GET', 'POST', 'OPTIONS']);

interface SocketData {
  request: ConnectRequest;
  resolved: AdmittedConnect;
}

class SocketIoConnection implements Connection {
  readonly transport = 'socketio' as const;
  sessionId: string | undefined;
  readonly id: string;
  private readonly socket: Socket;
  private readonly output: EngineOutput;
  eventsWritten = 0;

  constructor(id: string, socket: Socket, highWater: number) {
    this.id = id;
    this.socket = socket;
    this.output = new EngineOutput(socket.conn, highWater);
  }

  send(e: OutgoingEvent): boolean {
    this.eventsWritten++;
    return this.output.write(socketIoFrameOf(e));
  }

  queuedBytes(): number {
    return this.output.queued();
  }

  whenDrained(ready: () => void): void {
    this.output.whenDrained(ready);
  }

  close(reason: CloseReason): void {
    // A server disconnect is final for the socket.io client; a transport close makes it reconnect
    // (with its recovery offset), which is what a stopping replica wants of it.
    if (reason === 'slow_consumer') this.output.destroy();
    else if (reason === 'shutdown' || reason === 'unavailable' || reason === 'reconnect_advised')
      this.socket.conn.close();
    else this.socket.disconnect(true);
  }
}

export interface SocketIoLimits {
  /** SOCKETIO_MAX_PACKET_BYTES: engine.io's maxHttpBufferSize (its default is 1 MB). */
  maxPacketBytes: number;
  /** Takes an engine.io handshake from the client address's budget: the 429 when it has none left. */
  refuseHandshake(req: IncomingMessage): SubscriptionRequestError | undefined;
}

/** How long the engine waits for a client to complete its upgrade to WebSocket. */
const SOCKETIO_UPGRADE_TIMEOUT_MS = 45_000;

export function createSocketIoTransport(ctx: TransportContext, limits: SocketIoLimits) {
  // The engine is driven by our own routing (handleRequest/handleUpgrade), so it needs no path.
  const engine = new EngineServer({
    pingInterval: ctx.heartbeatMs,
    // engine.io's client stops polling once its WebSocket probe is answered, until the poll in flight
    // ends; a server that gives up on the upgrade then (10 s by default) leaves it paused, hearing
    // nothing until its ping timeout. A replica busy with a reconnect storm can take that long.
    upgradeTimeout: SOCKETIO_UPGRADE_TIMEOUT_MS,
    maxHttpBufferSize: limits.maxPacketBytes,
    // Polling answers get the CORS policy's headers; browsers apply none to WebSockets, so an
    // upgrade from an origin off the allow-list is refused here.
    cors: ctx.cors.socketIoOptions(socketIoPreflight),
    allowRequest: (req, cb) =>
      cb(null, req.headers.upgrade === undefined || ctx.cors.permitsUpgrade(req.headers.origin)),
  });
  const io = new Server({ path: SOCKETIO_PATH, serveClient: false });
  io.bind(engine);

  io.use((socket, next) => {
    const { auth, query, headers } = socket.handshake;
    const param = (name: string) => (auth?.[name] ?? query[name]) as unknown;
    let request: ConnectRequest;
    try {
      request = fromParams(
        {
          jwt: stringOrUndefined(param('jwt')),
          subscriptions: param('subscriptions'),
          // The offset the socket.io client sends back is newer than a lastEventId it was given once.
          lastEventId: stringOrUndefined(auth?.['offset']) ?? stringOrUndefined(param('lastEventId')),
          since: stringOrUndefined(param('since')),
          rewind: param('rewind'),
          latest: param('latest'),
          connectionToken: stringOrUndefined(param('connectionToken')),
          ackSession: param('ackSession'),
          authorization: headers.authorization,
        },
        ctx.bearerTokens,
      );
    } catch (err) {
      return next(connectError(err));
    }
    // The gate answers at once or later, and throws its refusal when at once: one promise for both.
    new Promise<AdmittedConnect>((admit) => admit(ctx.gate('socketio', request, socket.request))).then(
      (resolved) => {
        (socket.data as SocketData) = { request, resolved };
        // The session id of the recovery protocol: kept across reconnects, never used to look up state.
        (socket as unknown as { pid: string }).pid = stringOrUndefined(auth?.['pid']) ?? randomUUID();
        next();
      },
      (err) => next(connectError(err)),
    );
  });

  io.on('connection', (socket) => {
    const { request, resolved } = socket.data as SocketData;
    const id = newConnectionId();
    const conn = new SocketIoConnection(id, socket, ctx.writeHighWater);
    conn.sessionId = resolved.sessionId;
    socket.onAny(() => socket.disconnect(true));
    socket.on('disconnect', (why) => ctx.hub.remove(conn, endReasonOf(why)));
    addAdmitted(ctx, conn, resolved, request.resumeFrom, request);
  });

  // The handshake's place passes to the session it opened (engine.io emits `connection` while it
  // handles the handshake, the session's `request` being the handshake's); the session gives it back
  // when it closes. A handshake that opened none gives it back when its request is over.
  engine.on('connection', (session: EngineSocket) => {
    if (ctx.places.move(session.request, session)) session.once('close', () => ctx.places.release(session));
  });
  function releaseHandshakePlace(this: ServerResponse): void {
    ctx.places.release(this.req);
  }

  const owns = (req: IncomingMessage) => requestPath(req).startsWith(SOCKETIO_PATH);
  /**
   * An engine.io handshake (a request without a session id) opens a session engine.io holds until
   * it ends: it takes a place among the replica's connections, then from the client address's
   * budget like any connect; the refusal is a 429 (or a 503 when the replica is full).
   */
  const refusedHandshake = (req: IncomingMessage) => {
    if (req.method === 'OPTIONS' || !startsEngineSession(req)) return undefined;
    const refusal = ctx.takePlace('socketio', req, req) ?? limits.refuseHandshake(req);
    if (refusal) ctx.places.release(req);
    return refusal;
  };
  return {
    handle(req: IncomingMessage, res: ServerResponse): boolean {
      if (!owns(req)) return false;
      // engine.io serves GET and POST (and CORS preflights); it answers other methods on a live
      // session with an empty 500.
      if (!engineMethods.has(req.method ?? '')) {
        sendText(res, 405, 'Method not allowed.', { allow: 'GET, POST, OPTIONS', ...ctx.cors.headers(req) });
        return true;
      }
      const refusal = refusedHandshake(req);
      if (refusal)
        sendText(res, refusal.status, refusal.message, { ...ctx.cors.headers(req), ...refusal.headers });
      else {
        if (ctx.places.holds(req)) res.once('close', releaseHandshakePlace);
        engine.handleRequest(req, res);
      }
      return true;
    },
    upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
      if (!owns(req)) return false;
      const refusal = refusedHandshake(req);
      if (refusal) refuseUpgrade(socket, refusal);
      else {
        if (ctx.places.holds(req)) socket.once('close', () => ctx.places.release(req));
        engine.handleUpgrade(req, socket, head);
      }
      return true;
    },
    async close(): Promise<void> {
      await io.close();
      engine.close();
    },
  };
}

/**
 * Whether engine.io will start a new session for this request, read exactly as engine.io reads it
 * (6.x: the last value of each query parameter, and a handshake when `sid` is falsy): `?sid=` and
 * `?sid=x&sid=` are handshakes too, and a cap that read them as requests of a live session was
 * never asked.
 */
function startsEngineSession(req: IncomingMessage): boolean {
  const query = Object.fromEntries(new URL(req.url ?? '/', 'http://local').searchParams.entries());
  return !query['sid'];
}

function connectError(err: unknown): Error {
  const refusal = refusalOf(err);
  if (refusal) {
    return Object.assign(new Error(refusal.message), {
      data: { status: refusal.status, reason: refusal.reason },
    });
  }
  return Object.assign(new Error('Internal error.'), { data: { status: 500 } });
}

function stringOrUndefined(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * Why socket.io says a socket ended, as a lifecycle reason. The hub's own closes are told before
 * (Hub.close); a server-side disconnect left is the one for a client that sent a message.
 */
function endReasonOf(why: string): EndReason {
  switch (why) {
    case 'ping timeout':
      return 'idle_timeout';
    case 'transport error':
    case 'parse error':
      return 'error';
    case 'server namespace disconnect':
      return 'protocol_error';
    case 'server shutting down':
      return 'shutdown';
    default:
      return 'client_closed';
  }
}
