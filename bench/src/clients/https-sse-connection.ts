/**
 * One SSE connection over HTTP/1.1 with TLS, made with node:https as a client without HTTP/2 makes
 * it: ALPN offers only `http/1.1`, and the hub's certificate is checked against its CA. The 200
 * counts as connected; after it the body (de-chunked by node:http) goes to the stamp scanner and
 * nothing else is parsed, as on the raw socket (raw-connection.ts). What this client adds to the
 * raw one is TLS and node:http's response parser, the same for every hub measured with it.
 */
import type { ClientRequest } from 'node:http';
import { type RequestOptions, request } from 'node:https';
import type { ConnectionOptions, TLSSocket } from 'node:tls';
import { type ConnectionEvents, sourceAddress } from './raw-connection.ts';
import { StampScanner } from './stamp-scanner.ts';

export function openHttpsSseConnection(
  i: number,
  target: { port: number; path: string; ca: string },
  events: ConnectionEvents,
): ClientRequest {
  // The request's options go to tls.connect too (ALPN); the https types do not list them.
  const options: RequestOptions & ConnectionOptions = {
    host: '127.0.0.1',
    port: target.port,
    path: target.path,
    headers: { accept: 'text/event-stream' },
    localAddress: sourceAddress(i),
    ca: target.ca,
    ALPNProtocols: ['http/1.1'],
    // A connection of its own, as the raw client has: no agent pooling or keep-alive bookkeeping.
    agent: false,
  };
  const req = request(options);
  let opened = false;
  let failure: string | undefined;
  req.on('response', (res) => {
    if (res.statusCode !== 200) {
      failure = `answered ${res.statusCode}`;
      req.destroy();
      return;
    }
    opened = true;
    events.onOpen(`tls/${(res.socket as TLSSocket).alpnProtocol || 'none'}`);
    const scanner = new StampScanner();
    res.on('data', (chunk: Buffer) => {
      const arrivedAt = performance.timeOrigin + performance.now();
      scanner.scan(chunk, (stamp) => events.onStamp(stamp, arrivedAt));
    });
    res.on('error', (err) => {
      failure ??= err.message;
    });
  });
  req.on('error', (err) => {
    failure ??= err.message;
  });
  req.on('close', () => events.onClose(opened, failure));
  req.end();
  return req;
}
