/**
 * WebSocket with `?positions=true`: each event carries its stream position as `gwposition`, which
 * the client removes and keeps; a reconnect sends it back as `?lastEventId=`. The JWT goes as
 * `?jwt=` (a browser cannot set headers on a WebSocket). A refused connect is closed with 4000 + the
 * HTTP status; the end of the JWT with 4401; a stopping replica with 1012 (come back at once).
 */
import { connectUrl } from '../connect-url.ts';
import type { CloudEvent } from '../types.ts';
import type { Transport, TransportEnd } from './transport.ts';

const SERVICE_RESTART = 1012;
const SESSION_EXPIRED = 4401;

export const websocketTransport: Transport = {
  name: 'websocket',
  subscriptionsPath: 'ws',
  open(params, handlers) {
    const url = connectUrl(params, 'ws', {
      positions: 'true',
      jwt: params.token,
      lastEventId: params.lastEventId,
    });
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(url);
    let over = false;
    ws.onmessage = (message) => {
      if (typeof message.data !== 'string') return;
      const event = JSON.parse(message.data) as CloudEvent;
      const position = typeof event['gwposition'] === 'string' ? event['gwposition'] : undefined;
      delete event['gwposition'];
      handlers.event(event, position);
    };
    ws.onclose = (close) => {
      if (over) return;
      over = true;
      handlers.end(endOf(close.code, close.reason));
    };
    return {
      close() {
        over = true;
        ws.close();
      },
    };
  },
};

function endOf(code: number, reason: string): TransportEnd {
  if (code === SESSION_EXPIRED) return { kind: 'expired' };
  if (code > 4000 && code < 4600) return { kind: 'refused', status: code - 4000, message: reason };
  if (code === SERVICE_RESTART) return { kind: 'dropped', reason: `closed ${code} ${reason}`, soon: true };
  return { kind: 'dropped', reason: `closed ${code} ${reason}`.trim() };
}
