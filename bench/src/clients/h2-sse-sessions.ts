/**
 * SSE over HTTP/2 with node:http2 as a browser makes it: one session per client origin (here: per
 * source address), carrying `streamsPerSession` EventSource streams. A tab has one; the tabs of one
 * browser on the same origin share the session. Connection i is a stream of session ⌊i / S⌋ (on the
 * port of its first stream); a session that failed or closed is made again for the next stream.
 * The stream's 200 counts as connected; after it every DATA chunk goes to the stamp scanner and
 * nothing else is parsed, as on the raw socket (raw-connection.ts). What this client adds to the
 * raw one is TLS and nghttp2's framing, which every HTTP/2 client pays.
 */
import { type ClientHttp2Session, connect, constants, type SecureClientSessionOptions } from 'node:http2';
import { type ConnectionEvents, sourceAddress } from './raw-connection.ts';
import { StampScanner } from './stamp-scanner.ts';

export class H2SseSessions {
  private readonly sessions = new Map<number, ClientHttp2Session>();
  private readonly ca: string;
  private readonly streamsPerSession: number;
  /** Called with every session made (the client closes them all at the end). */
  private readonly onSession: (session: ClientHttp2Session) => void;

  constructor(
    wire: { ca: string; streamsPerSession: number },
    onSession: (session: ClientHttp2Session) => void,
  ) {
    this.ca = wire.ca;
    this.streamsPerSession = wire.streamsPerSession;
    this.onSession = onSession;
  }

  openStream(i: number, target: { port: number; path: string }, events: ConnectionEvents): void {
    const session = this.sessionFor(Math.floor(i / this.streamsPerSession), target.port);
    const stream = session.request({ ':path': target.path, accept: 'text/event-stream' });
    const scanner = new StampScanner();
    let opened = false;
    let failure: string | undefined;
    stream.on('response', (headers) => {
      if (headers[':status'] !== 200) {
        failure = `answered ${headers[':status']}`;
        stream.close(constants.NGHTTP2_CANCEL);
        return;
      }
      opened = true;
      events.onOpen(`tls/${session.alpnProtocol || 'none'}`);
    });
    stream.on('data', (chunk: Buffer) => {
      if (!opened) return;
      const arrivedAt = performance.timeOrigin + performance.now();
      scanner.scan(chunk, (stamp) => events.onStamp(stamp, arrivedAt));
    });
    stream.on('error', (err) => {
      failure ??= err.message;
    });
    stream.on('close', () => {
      failure ??= stream.rstCode ? `stream reset (${stream.rstCode})` : 'stream closed';
      events.onClose(opened, failure);
    });
  }

  private sessionFor(key: number, port: number): ClientHttp2Session {
    const live = this.sessions.get(key);
    if (live && !live.closed && !live.destroyed) return live;
    // tls.connect passes localAddress on to the socket; the http2 types do not list it.
    const options: SecureClientSessionOptions & { localAddress: string } = {
      ca: this.ca,
      localAddress: sourceAddress(key),
    };
    const session = connect(`https://127.0.0.1:${port}`, options);
    // A session's failure reaches each of its streams as their own error and close.
    session.on('error', () => undefined);
    this.sessions.set(key, session);
    this.onSession(session);
    return session;
  }
}
