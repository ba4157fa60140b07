/**
 * Refuses an HTTP upgrade (WebSocket, socket.io's WebSocket handshake) before it happens: a plain
 * HTTP answer with the refusal's status and headers (Retry-After), written to the raw socket, which
 * then closes. A client sees it as the upgrade's response (`unexpected-response` in `ws`).
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { SubscriptionRequestError } from '../subscriptions/index.ts';

export function refuseUpgrade(socket: Duplex, refusal: SubscriptionRequestError): void {
  // A reset meanwhile is heard by the listener the service host gave the socket when it took the
  // upgrade (service-host.ts).
  const body = refusal.message;
  const headers = Object.entries(refusal.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ''}\r\nconnection: close\r\n` +
      `content-type: text/plain; charset=utf-8\r\nx-content-type-options: nosniff\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `${headers}\r\n${body}`,
  );
}
