/**
 * The shape of a malformed-input case and the bytes that build one. A case is sent raw (node:net),
 * as an attacker would: what fetch cannot say (a chunk size that is not hex, a body that never
 * ends, a WebSocket frame longer than allowed) is written as it is.
 */

/** An HTTP request written as bytes; `endless` is then repeated until the gateway answers. */
export interface HttpCase {
  kind: 'http';
  name: string;
  /** `edge`: the public edge (proxy, hub, publisher); `rest`: the REST engine's own port. */
  via: 'edge' | 'rest';
  /** Request line and headers, without the blank line that ends them. */
  head: string;
  body?: Buffer;
  /** Written again and again after `body` (at most 32 MiB) until an answer comes. */
  endless?: Buffer;
  /** Once the answer came, the connection is reset (RST) instead of closed. */
  reset?: boolean;
  /** The answers that pass; 0 stands for "the connection was closed without one". */
  statuses: readonly number[];
}

/** A WebSocket opened on `path` of the public edge, then `frames` written; the close code counts. */
export interface WsCase {
  kind: 'ws';
  name: string;
  path: string;
  frames: Buffer[];
  /** Close codes that pass (1006: closed without a close frame). */
  closeCodes: readonly number[];
}

/** A socket.io (engine.io) polling session opened first, then `body` POSTed to it. */
export interface SocketIoPollingCase {
  kind: 'socketio-polling';
  name: string;
  body: Buffer;
  statuses: readonly number[];
}

/**
 * A correlated response to the internal API's `/vN/responses` (waiting-requests.ts): a request is
 * first made to wait at the edge (`response_from: http_async`), then `build` makes the case from
 * its correlation id, an authentic one, so that only what the case breaks is refused.
 */
export interface ResponseCase {
  kind: 'response';
  name: string;
  build(correlation: string): Pick<HttpCase, 'head' | 'body' | 'endless'>;
  statuses: readonly number[];
  /**
   * What the waiting client must get: the response the case delivers. Absent: the case delivers
   * nothing, and a proper response sent after it still completes the request (send-case.ts).
   */
  delivered?: { status: number; body: string };
}

export type CorpusCase = HttpCase | WsCase | SocketIoPollingCase | ResponseCase;

/** A request head: request line, `headers` and (unless given) `host`. */
export function head(requestLine: string, headers: Record<string, string | number> = {}): string {
  const lines = [requestLine, 'host: 127.0.0.1'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return lines.join('\r\n');
}

/** A head whose body has a content-length. */
export function withLength(requestLine: string, headers: Record<string, string>, body: Buffer): string {
  return head(requestLine, { ...headers, 'content-length': body.length });
}

/** One chunk of a chunked body. */
export function chunk(data: Buffer | string): Buffer {
  const bytes = Buffer.from(data);
  return Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]);
}

export const lastChunk = Buffer.from('0\r\n\r\n');

/** 4xx: what a refused input must get. */
export const clientErrors = Array.from({ length: 100 }, (_, i) => 400 + i);
