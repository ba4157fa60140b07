/**
 * SSE over HTTP/2 for tests: several streams on one session (as a browser multiplexes them), each
 * keeping its frames as the fetch-based client does (sse-client.ts). A stream can be paused to
 * play a client that stops reading; the session's other streams go on.
 */
import { type ClientHttp2Session, type ClientHttp2Stream, connect } from 'node:http2';
import { parseSseText, type SseFrame } from './sse-client.ts';

export interface H2SseStream {
  status: number;
  frames: SseFrame[];
  /** Resolves when the stream ends or is reset, with its RST code (0 for a clean end). */
  ended: Promise<number>;
  /** Stops reading (HTTP/2 flow control then holds the server's output) or resumes. */
  pause(): void;
  resume(): void;
  close(): void;
}

export interface H2SseSession {
  session: ClientHttp2Session;
  /** The protocol ALPN chose ('h2' expected). */
  alpn: string | false | undefined;
  open(path: string, headers?: Record<string, string>): Promise<H2SseStream>;
  close(): void;
}

export async function openH2Session(origin: string, ca: Buffer): Promise<H2SseSession> {
  const session = connect(origin, { ca });
  await new Promise<void>((resolve, reject) => {
    session.once('connect', () => resolve());
    session.once('error', reject);
  });
  session.on('error', () => {});
  return {
    session,
    alpn: session.alpnProtocol,
    open: (path, headers = {}) => openStream(session, path, headers),
    close: () => session.destroy(),
  };
}

async function openStream(
  session: ClientHttp2Session,
  path: string,
  headers: Record<string, string>,
): Promise<H2SseStream> {
  const stream: ClientHttp2Stream = session.request({
    ':path': path,
    accept: 'text/event-stream',
    ...headers,
  });
  stream.on('error', () => {});
  const status = await new Promise<number>((resolve, reject) => {
    stream.once('response', (h) => resolve(Number(h[':status'])));
    stream.once('error', reject);
  });
  const frames: SseFrame[] = [];
  const parser = parseSseText(frames, []);
  stream.setEncoding('utf8');
  stream.on('data', (text: string) => parser(text));
  const ended = new Promise<number>((resolve) => stream.once('close', () => resolve(stream.rstCode ?? 0)));
  return {
    status,
    frames,
    ended,
    pause: () => stream.pause(),
    resume: () => stream.resume(),
    close: () => stream.close(),
  };
}
