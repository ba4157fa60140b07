/**
 * Server-sent events: `GET /_gw/v1/connection/sse`. Each event is an `id:` (its stream position),
 * an `event:` (the CloudEvent type) and a `data:` line with the CloudEvent JSON; a `: heartbeat`
 * comment keeps proxies from closing idle streams; there is no idle time-out. A reconnecting client
 * sends `Last-Event-ID` and gets what it missed. A stream this replica ends so that the client
 * comes back (shutdown, a resume that cannot be served now) ends with a `retry:` hint with jitter.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestPath, sendText } from '@gatehouse/service-kit';
import type { CloseReason, Connection } from '../connection.ts';
import { newConnectionId } from '../connection-tokens.ts';
import { readConnectRequest } from '../connect-request.ts';
import type { OutgoingEvent } from '../gateway-events.ts';
import { SubscriptionRequestError } from '../subscription-request.ts';
import { connectionPreflight } from './cors.ts';
import { oncePerEvent } from './once-per-event.ts';
import type { TransportContext } from './transport-context.ts';

export const SSE_PATH = '/_gw/v1/connection/sse';

class SseConnection implements Connection {
  readonly transport = 'sse' as const;
  sessionId: string | undefined;
  readonly id: string;
  readonly token: string;
  private readonly res: ServerResponse;
  private readonly maxBuffered: number;
  private readonly onClose: (c: SseConnection) => void;
  private readonly retryMs: () => number;

  constructor(
    id: string,
    token: string,
    res: ServerResponse,
    options: { maxBuffered: number; onClose: (c: SseConnection) => void; retryMs: () => number },
  ) {
    this.id = id;
    this.token = token;
    this.res = res;
    this.maxBuffered = options.maxBuffered;
    this.onClose = options.onClose;
    this.retryMs = options.retryMs;
  }

  send(e: OutgoingEvent): void {
    // The socket may be gone before our 'close' listener ran: writing then would emit an error.
    if (this.res.destroyed) return;
    if (this.res.writableLength > this.maxBuffered) this.close('slow_consumer');
    else this.res.write(frameOf(e));
  }

  heartbeat(): void {
    if (!this.res.destroyed) this.res.write(': heartbeat\n\n');
  }

  close(reason: CloseReason): void {
    // A slow consumer is not reading: ending would wait behind what it never reads, keeping those
    // bytes (up to MAX_BUFFERED_BYTES) resident for as long as the client keeps the socket open.
    if (reason === 'slow_consumer') this.res.destroy();
    else if (!this.res.writableEnded) {
      const comeBack = reason === 'shutdown' || reason === 'unavailable';
      if (comeBack && !this.res.destroyed) this.res.end(`retry: ${this.retryMs()}\n\n`);
      else this.res.end();
    }
    this.onClose(this);
  }
}

/**
 * One event as SSE text. A line break ends a field in SSE, so none reaches a field raw whatever
 * the event holds (the publisher refuses them in attributes, but the hub does not trust the
 * stream): in `id:` and `event:` each CR or LF becomes U+FFFD, and data spanning several lines is
 * sent as one `data:` line per line, which the client joins with LF as the spec says.
 */
export function sseFrame(e: OutgoingEvent): string {
  const id = e.position === undefined ? '' : `id: ${singleLine(e.position)}\n`;
  return `${id}event: ${singleLine(e.type)}\n${dataLines(e.json)}\n`;
}

const lineBreak = /\r\n|\r|\n/;

function singleLine(value: string): string {
  return lineBreak.test(value) ? value.replace(/[\r\n]/g, '\uFFFD') : value;
}

function dataLines(data: string): string {
  if (!lineBreak.test(data)) return `data: ${data}\n`;
  return data
    .split(lineBreak)
    .map((line) => `data: ${line}\n`)
    .join('');
}

/** The frame is built once per event; the first write flattens it, the others reuse it. */
const frameOf = oncePerEvent(sseFrame);

export function createSseTransport(ctx: TransportContext) {
  const open = new Set<SseConnection>();
  const timer = setInterval(() => {
    for (const c of open) c.heartbeat();
  }, ctx.heartbeatMs);
  timer.unref();
  const forget = (c: SseConnection) => {
    if (open.delete(c)) ctx.hub.remove(c);
  };

  async function connect(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const cors = ctx.cors.headers(req);
    let connectReq: ReturnType<typeof readConnectRequest>;
    let resolved: Awaited<ReturnType<TransportContext['gate']>>;
    try {
      connectReq = readConnectRequest(req, ctx.bearerTokens);
      resolved = await ctx.gate('sse', connectReq);
    } catch (err) {
      if (err instanceof SubscriptionRequestError)
        return sendText(res, err.status, err.message, { ...cors, ...err.headers });
      throw err;
    }
    if (req.destroyed) return;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
      ...cors,
    });
    // Sends the header on its own now: node:http keeps the header text for the life of the response,
    // and only writing it alone flattens it (otherwise it stays a rope of ~27 string pieces, ~1 KiB
    // per connection).
    res.flushHeaders();
    req.socket.setNoDelay(true);
    const id = newConnectionId();
    const conn = new SseConnection(id, ctx.tokens.issue(id), res, {
      maxBuffered: ctx.maxBufferedBytes,
      onClose: forget,
      retryMs: ctx.reconnectDelayMs,
    });
    conn.sessionId = resolved.sessionId;
    open.add(conn);
    res.on('close', () => forget(conn));
    ctx.hub.add(conn, resolved.subscriptions, connectReq.resumeFrom);
  }

  return {
    handle(req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean> {
      if (requestPath(req) !== SSE_PATH) return false;
      if (req.method === 'OPTIONS') return ctx.cors.preflight(req, res, connectionPreflight);
      if (req.method !== 'GET') {
        sendText(res, 405, 'Method not allowed.', { allow: 'GET, OPTIONS' });
        return true;
      }
      return connect(req, res).then(() => true);
    },
    close(): void {
      clearInterval(timer);
    },
  };
}
