/**
 * One push connection on a raw `net` socket: an SSE GET or a WebSocket upgrade written by hand, the
 * first byte of the answer counted as "connected" (after checking its status code: 200 for SSE,
 * 101 for WebSocket), then every chunk handed to a stamp scanner. Nothing else is parsed, so the
 * client costs the same for every server (performance-anchors §5.3, §6.4).
 *
 * The WebSocket handshake is written by hand rather than with the `ws` client: `ws` would add an
 * http.ClientRequest, a parser and a Receiver per connection in the client process and decode every
 * frame, so the client's share of the measured latency would differ between SSE and WebSocket. The
 * stamp is found in the unmasked server text frames as it is in SSE frames. Pings are not answered:
 * the benchmarked hubs either send none or send them far apart (HEARTBEAT_INTERVAL 10m in the bench).
 */
import { connect, type Socket } from 'node:net';
import type { NegotiatedProtocol, PushTransport } from './push-client-messages.ts';
import { StampScanner } from './stamp-scanner.ts';

export interface ConnectionEvents {
  /** The first byte arrived with the expected status, over `protocol`. */
  onOpen(protocol: NegotiatedProtocol): void;
  /** The connection ended before it opened (`reason`) or after. */
  onClose(opened: boolean, reason: string | undefined): void;
  /** One event's stamp, and when its bytes arrived (performance.timeOrigin + performance.now()). */
  onStamp(stamp: number, arrivedAt: number): void;
}

/** Source addresses 127.0.0.2–127.0.0.201: 28k ephemeral ports each, far beyond one address's. */
const sourceAddresses = 200;

/** The source address of client connection (or HTTP/2 session) i. */
export function sourceAddress(i: number): string {
  return `127.0.0.${2 + (i % sourceAddresses)}`;
}

export function openRawConnection(
  i: number,
  target: { transport: PushTransport; port: number; path: string; extraHeaders?: string | undefined },
  events: ConnectionEvents,
): Socket {
  const socket = connect({
    host: '127.0.0.1',
    port: target.port,
    localAddress: sourceAddress(i),
  });
  const scanner = new StampScanner();
  const expectedStatus = target.transport === 'sse' ? '200' : '101';
  let opened = false;
  let failure: string | undefined;
  socket.once('connect', () => socket.write(requestText(target)));
  socket.on('data', (chunk: Buffer) => {
    const arrivedAt = performance.timeOrigin + performance.now();
    if (!opened) {
      const status = chunk.toString('latin1', 9, 12);
      if (status !== expectedStatus) {
        failure = `answered ${chunk.toString('latin1', 0, Math.min(chunk.length, 40)).split('\r\n')[0]}`;
        socket.destroy();
        return;
      }
      opened = true;
      events.onOpen('tcp');
    }
    scanner.scan(chunk, (stamp) => events.onStamp(stamp, arrivedAt));
  });
  socket.on('error', (err) => {
    failure ??= err.message;
  });
  socket.on('close', () => events.onClose(opened, failure));
  return socket;
}

function requestText(target: {
  transport: PushTransport;
  port: number;
  path: string;
  extraHeaders?: string | undefined;
}): string {
  const head = `GET ${target.path} HTTP/1.1\r\nHost: 127.0.0.1:${target.port}\r\n${target.extraHeaders ?? ''}`;
  if (target.transport === 'sse') return `${head}Accept: text/event-stream\r\n\r\n`;
  return (
    `${head}Upgrade: websocket\r\nConnection: Upgrade\r\n` +
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n'
  );
}
