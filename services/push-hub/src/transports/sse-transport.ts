/**
 * Server-sent events: `GET /_gw/v1/connection/sse`. Each event is an `id:` (its stream position),
 * an `event:` (the CloudEvent type) and a `data:` line with the CloudEvent JSON; the hub's own
 * events also have an `origin: gateway` line, which no producer can write; a `: heartbeat`
 * comment keeps proxies from closing idle streams; there is no idle time-out. A reconnecting client
 * sends `Last-Event-ID` and gets what it missed. A stream this replica ends so that the client
 * comes back (shutdown, a resume that cannot be served now) ends with a `retry:` hint with jitter.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants, type ServerHttp2Stream } from 'node:http2';
import type { Writable } from 'node:stream';
import { NO_SNIFF_HEADER, releaseHttpParserSoon, requestPath, sendText } from '@gatehouse/service-kit';
import type { CloseReason, Connection, OutgoingEvent } from '../connections/index.ts';
import { newConnectionId } from '../auth/index.ts';
import { type AdmittedConnect, type ConnectRequest, readConnectRequest } from '../admission/index.ts';
import { SubscriptionRequestError } from '../subscriptions/index.ts';
import { connectionPreflight } from './cors.ts';
import { oncePerEvent } from './once-per-event.ts';
import { addAdmitted, type TransportContext } from './transport-context.ts';
import { forgetSentHead } from './sent-head.ts';
import { type TurnMark, writeInTurn } from './turn-writes.ts';

export const SSE_PATH = '/_gw/v1/connection/sse';

/**
 * After the header, an event's bytes go straight to the socket: they are the same for every
 * subscriber, HTTP/1.1 chunk framing included, so they are made once per event (sseBytesOf) and
 * ServerResponse's per-write work (a chunk header, a UTF-8 encoding, a cork) is not paid per
 * subscriber; writes of one turn are coalesced (turn-writes.ts). A response still queued behind an
 * unfinished one on its connection (pipelining) has no socket yet and writes through the response.
 * Over HTTP/2 the same bare bytes go to the response's own stream (its socket is the session's,
 * shared by every stream, and may not be written to), so the slow-consumer bound is per stream.
 */
class SseConnection implements Connection, TurnMark {
  sessionId: string | undefined;
  readonly id: string;
  readonly response: ServerResponse;
  private readonly out: Writable;
  /** Whether `out` needs the chunk framing (the socket of a chunked response). */
  private readonly framed: boolean;
  private readonly shared: SseTransportState;
  writtenInTurn = 0;
  eventsWritten = 0;

  constructor(id: string, res: ServerResponse, shared: SseTransportState) {
    this.id = id;
    this.response = res;
    const h2 = http2StreamOf(res);
    this.out = h2 ?? res.socket ?? res;
    this.framed = h2 === undefined && res.socket !== null && res.chunkedEncoding;
    this.shared = shared;
  }

  send(e: OutgoingEvent): boolean {
    this.write(sseBytesOf(e));
    this.eventsWritten++;
    return this.out.writableLength < this.shared.highWater;
  }

  /**
   * The events as one write, its text made for this connection alone (the welcome pair): one
   * string, framed as one chunk, written as it is: no Buffer of its own, which per connection
   * left holes in malloc's heap between the connections' HTTP parsers (sseBytes). ASCII text (each
   * character one byte) goes as latin1, the same bytes: node sizes a string write's memory by its
   * encoding's worst case, three bytes a character for UTF-8, and that larger block, freed at
   * once, left holes of its own (about 0.7 KiB per connection held, memory-floor.bench.ts).
   */
  sendAll(events: readonly OutgoingEvent[]): boolean {
    let text = '';
    for (const e of events) text += sseFrame(e);
    const size = Buffer.byteLength(text);
    const encoding = size === text.length ? 'latin1' : 'utf8';
    const written = this.framed ? `${size.toString(16)}\r\n${text}\r\n` : text;
    if (!this.out.destroyed) writeInTurn(this.out, written, this, encoding);
    this.eventsWritten += events.length;
    return this.out.writableLength < this.shared.highWater;
  }

  queuedBytes(): number {
    return this.out.writableLength;
  }

  whenDrained(ready: () => void): void {
    if (this.out.destroyed) return;
    if (this.out.writableNeedDrain) this.out.once('drain', ready);
    else setImmediate(ready);
  }

  heartbeat(): void {
    // A stream that is full has data on its way: no heartbeat needed.
    if (this.out.writableLength < this.shared.highWater) this.write(HEARTBEAT);
  }

  close(reason: CloseReason): void {
    // A slow consumer is not reading: ending would wait behind what it never reads, keeping those
    // bytes (up to MAX_BUFFERED_BYTES) resident for as long as the client keeps the socket open.
    if (reason === 'slow_consumer') this.cut();
    else if (!this.response.writableEnded) {
      const comeBack = reason === 'shutdown' || reason === 'unavailable' || reason === 'reconnect_advised';
      if (comeBack && !this.response.destroyed) this.response.end(`retry: ${this.shared.retryMs()}\n\n`);
      else this.response.end();
    }
    this.shared.forget(this);
  }

  /** The same for every SSE connection: on the prototype, not a field of each (held 10k times). */
  get transport(): 'sse' {
    return 'sse';
  }

  /** Drops the unsent output at once: the socket, or over HTTP/2 only this stream (RST_STREAM CANCEL). */
  private cut(): void {
    const h2 = http2StreamOf(this.response);
    if (h2) h2.close(constants.NGHTTP2_CANCEL);
    else this.response.destroy();
  }

  private write(bytes: SseBytes): void {
    // The socket may be gone before our 'close' listener ran: writing then would emit an error.
    if (this.out.destroyed) return;
    writeInTurn(this.out, this.framed ? bytes.chunk : bytes.frame, this);
  }
}

/** The HTTP/2 stream of a response from node's compatibility layer (Http2ServerResponse). */
function http2StreamOf(res: ServerResponse): ServerHttp2Stream | undefined {
  return (res as unknown as { stream?: ServerHttp2Stream }).stream;
}

/** What every connection of the transport shares (kept out of the connection, which is held 10k times). */
interface SseTransportState {
  highWater: number;
  retryMs: () => number;
  forget: (c: SseConnection) => void;
}

/** An SSE frame as bytes: bare, and as one HTTP/1.1 chunk. */
interface SseBytes {
  frame: Buffer;
  chunk: Buffer;
}

/**
 * One allocation: the chunk, and the frame as a view of its middle. The text is encoded straight
 * into the chunk: the chunk as one string of its own was one more copy of every event's text (a
 * new connection's two welcome events are among the largest allocations of a connect).
 *
 * Its own memory, not a slice of node's 8 KiB Buffer pool: a pool slab is freed only when every
 * slice of it is collected, after the connect burst has put more 10 KiB HTTP parsers above it in
 * malloc's heap, and the freed slabs left holes there that no parser fits (~190 B of resident
 * memory per held connection, measured with B-sse writing the same three Buffers per connect; its
 * own memory: ~55 B). It also keeps a slow consumer's unsent event from holding a whole slab.
 */
export function sseBytes(text: string): SseBytes {
  const size = Buffer.byteLength(text);
  const sizeLine = `${size.toString(16)}\r\n`;
  const chunk = Buffer.allocUnsafeSlow(sizeLine.length + size + 2);
  chunk.write(sizeLine, 0, 'latin1');
  chunk.write(text, sizeLine.length, 'utf8');
  chunk[chunk.length - 2] = 0x0d;
  chunk[chunk.length - 1] = 0x0a;
  return { frame: chunk.subarray(sizeLine.length, sizeLine.length + size), chunk };
}

const HEARTBEAT = sseBytes(': heartbeat\n\n');

/**
 * One event as SSE text. A line break ends a field in SSE, so none reaches a field raw whatever
 * the event holds (the publisher refuses them in attributes, but the hub does not trust the
 * stream): in `id:` and `event:` each CR or LF becomes U+FFFD, and data spanning several lines is
 * sent as one `data:` line per line, which the client joins with LF as the spec says.
 */
export function sseFrame(e: OutgoingEvent): string {
  const id = e.position === undefined ? '' : `id: ${singleLine(e.position)}\n`;
  // The hub's own JSON is made by JSON.stringify or from its templates: it has no line break.
  const data = e.own ? `${OWN_EVENT_FIELD}data: ${e.json}\n` : dataLines(e.json);
  return `${id}event: ${singleLine(e.type)}\n${data}\n`;
}

/**
 * The field line that marks the hub's own events. Only the hub writes field lines (a producer's
 * text never ends one: see above), and EventSource ignores a field it does not know.
 */
const OWN_EVENT_FIELD = 'origin: gateway\n';

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

/** The bytes are made once per event, for its first subscriber, and reused for the others. */
const sseBytesOf = oncePerEvent((e) => sseBytes(sseFrame(e)));

/**
 * The 200 head of a stream. The CORS policy answers most requests with one of its constant header
 * sets (cors.ts), so the HTTP/1.1 head for each is made once, not spread into a new object per
 * connect; a head with a request's own origin is made for it.
 */
function streamHead(cors: Readonly<Record<string, string>>, h2: boolean): Record<string, string> {
  if (h2) return { ...SSE_HEAD, ...cors };
  let head = h1Heads.get(cors);
  if (head === undefined) {
    // The stream is its connection's last response, so node's HTTP parser can be given back once
    // it started (openStream). HTTP/2 has no connection-specific headers.
    head = { ...SSE_HEAD, connection: 'close', ...cors };
    if (Object.isFrozen(cors)) h1Heads.set(cors, Object.freeze(head));
  }
  return head;
}

/**
 * Whole, nosniff included: the edge adds nosniff only to a head that lacks it, by `setHeader`,
 * which sends node's `writeHead` down its slow path (a header entry per header, no-sniff-response.ts).
 */
const SSE_HEAD: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
  [NO_SNIFF_HEADER]: 'nosniff',
};

const h1Heads = new WeakMap<object, Record<string, string>>();

export function createSseTransport(ctx: TransportContext) {
  const open = new Map<ServerResponse, SseConnection>();
  const timer = setInterval(() => {
    for (const c of open.values()) c.heartbeat();
  }, ctx.heartbeatMs);
  timer.unref();
  const state: SseTransportState = {
    highWater: ctx.writeHighWater,
    retryMs: ctx.reconnectDelayMs,
    forget(c) {
      if (open.delete(c.response)) ctx.hub.remove(c);
    },
  };
  // One listener shared by every response (`this` is the response): a connection has no closure.
  // The response holds the connection's place from before the gate until it closes, however it
  // ends; the connection, once added, goes with it. One listener for both: a listener added to a
  // response that has some grows its list (node:events copies it), once more per connect.
  function onResponseClose(this: ServerResponse): void {
    ctx.places.release(this);
    const conn = open.get(this);
    if (conn) state.forget(conn);
  }

  /**
   * Answers the connect: at once when the gate admits it at once (ctx.gate), so a reconnect storm's
   * connects cost no promise; a promise of `true` (handled) when a step of the gate has to wait.
   */
  function connect(req: IncomingMessage, res: ServerResponse): true | Promise<true> {
    const cors = ctx.cors.headers(req);
    const full = ctx.takePlace('sse', res, req);
    if (full) return refuse(res, full, cors);
    res.on('close', onResponseClose);
    let connectReq: ConnectRequest;
    let admitted: AdmittedConnect | Promise<AdmittedConnect>;
    try {
      connectReq = readConnectRequest(req, ctx.bearerTokens);
      admitted = ctx.gate('sse', connectReq, req);
    } catch (err) {
      return refuseOrThrow(res, err, cors);
    }
    if (admitted instanceof Promise) return openLater(req, res, cors, connectReq, admitted);
    return openStream(req, res, cors, connectReq, admitted);
  }

  async function openLater(
    req: IncomingMessage,
    res: ServerResponse,
    cors: Record<string, string>,
    connectReq: ConnectRequest,
    admitting: Promise<AdmittedConnect>,
  ): Promise<true> {
    let admitted: AdmittedConnect;
    try {
      admitted = await admitting;
    } catch (err) {
      return refuseOrThrow(res, err, cors);
    }
    return openStream(req, res, cors, connectReq, admitted);
  }

  function openStream(
    req: IncomingMessage,
    res: ServerResponse,
    cors: Record<string, string>,
    connectReq: ConnectRequest,
    admitted: AdmittedConnect,
  ): true {
    if (req.destroyed) return true;
    const h2 = req.httpVersionMajor === 2;
    // The head and the welcome events leave in one write (the socket corked until all are queued):
    // a write each made three system calls per connect, the largest cost of a reconnect storm.
    const socket = h2 ? undefined : req.socket;
    socket?.cork();
    try {
      startStream(req, res, cors, connectReq, admitted);
    } finally {
      socket?.uncork();
    }
    // node:http keeps the request for as long as the stream lasts, and with it the target's text:
    // its query (the subscriptions, a token) is read, and no one reads it again. The path stays.
    req.url = SSE_PATH;
    // And the connection's HTTP parser, to read a next request there will not be: ~10 KB of native
    // memory, most of what a held stream costs.
    if (!h2) releaseHttpParserSoon(req, res);
    return true;
  }

  function refuseOrThrow(res: ServerResponse, err: unknown, cors: Record<string, string>): true {
    if (err instanceof SubscriptionRequestError) return refuse(res, err, cors);
    throw err;
  }

  function refuse(
    res: ServerResponse,
    refusal: SubscriptionRequestError,
    cors: Record<string, string>,
  ): true {
    sendText(res, refusal.status, refusal.message, { ...cors, ...refusal.headers });
    return true;
  }

  /** The 200 head, then the connection registered with the hub, which writes the welcome events. */
  function startStream(
    req: IncomingMessage,
    res: ServerResponse,
    cors: Record<string, string>,
    connectReq: ConnectRequest,
    resolved: AdmittedConnect,
  ): void {
    const h2 = req.httpVersionMajor === 2;
    res.writeHead(200, streamHead(cors, h2));
    // Writes the header as a string of its own (into the cork): node:http keeps the header text for
    // the life of the response, and only writing it as it is flattens it (otherwise it stays a rope
    // of ~27 string pieces, ~1 KiB per connection).
    res.flushHeaders();
    forgetSentHead(res);
    if (!h2) req.socket.setNoDelay(true);
    const id = newConnectionId();
    const conn = new SseConnection(id, res, state);
    conn.sessionId = resolved.sessionId;
    open.set(res, conn);
    addAdmitted(ctx, conn, resolved, connectReq.resumeFrom, connectReq);
  }

  return {
    handle(req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean> {
      if (requestPath(req) !== SSE_PATH) return false;
      if (req.method === 'OPTIONS') return ctx.cors.preflight(req, res, connectionPreflight);
      if (req.method !== 'GET') {
        sendText(res, 405, 'Method not allowed.', { allow: 'GET, OPTIONS' });
        return true;
      }
      return connect(req, res);
    },
    close(): void {
      clearInterval(timer);
    },
  };
}
