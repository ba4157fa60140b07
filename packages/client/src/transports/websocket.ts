/**
 * WebSocket with `?positions=true`: each stream event carries its stream position as `gwposition`,
 * which the client removes and keeps; a reconnect sends it back as `?lastEventId=`. The gateway's
 * own events carry theirs as `gwcontrol` instead. The gateway adds `gwposition` as the last member
 * of every stream event, so a producer's own is overridden, never missing: an event with it is
 * never taken for the gateway's, whatever else it holds. The JWT goes as
 * `?jwt=` (a browser cannot set headers on a WebSocket). A refused connect is closed with 4000 + the
 * HTTP status; the end of the JWT with 4401; a stopping replica with 1012 (come back at once).
 * `heartbeat=true` asks the gateway for a heartbeat frame with every ping (a browser sees no
 * WebSocket pings): a connection that hears nothing for `idleTimeoutMs` (a NAT that forgot it, a
 * laptop that slept) is closed and ends as dropped, as SSE and long-polling do.
 */
import { connectUrl } from '../connect-url.ts';
import type { CloudEvent } from '../types.ts';
import type { Transport, TransportEnd } from './transport.ts';

const SERVICE_RESTART = 1012;
const ABNORMAL_CLOSURE = 1006;
const SESSION_EXPIRED = 4401;

export const websocketTransport: Transport = {
  name: 'websocket',
  subscriptionsPath: 'ws',
  renewsInPlace: true,
  open(params, handlers) {
    const url = connectUrl(params, 'ws', {
      positions: 'true',
      jwt: params.token,
      lastEventId: params.lastEventId,
      heartbeat: 'true',
    });
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(url);
    let over = false;
    let idle: ReturnType<typeof setTimeout> | undefined;
    const end = (how: TransportEnd) => {
      if (over) return;
      over = true;
      clearTimeout(idle);
      handlers.end(how);
    };
    const alive = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        ws.close();
        end({ kind: 'dropped', code: 'idle', reason: `nothing received for ${params.idleTimeoutMs} ms` });
      }, params.idleTimeoutMs);
    };
    alive();
    ws.onmessage = (message) => {
      alive();
      if (typeof message.data !== 'string') return;
      const frame = JSON.parse(message.data) as Record<string, unknown>;
      const position = frame['gwposition'];
      const control = frame['gwcontrol'];
      delete frame['gwposition'];
      delete frame['gwcontrol'];
      const event = frame as unknown as CloudEvent;
      if (typeof position === 'string') handlers.event(event, position);
      else if (typeof control === 'string') handlers.gatewayEvent(event, control || undefined);
      else handlers.event(event, undefined);
    };
    ws.onclose = (close) => end(endOf(close.code, close.reason));
    return {
      close() {
        over = true;
        clearTimeout(idle);
        ws.close();
      },
    };
  },
};

function endOf(code: number, reason: string): TransportEnd {
  if (code === SESSION_EXPIRED) return { kind: 'expired' };
  if (code > 4000 && code < 4600) return { kind: 'refused', status: code - 4000, message: reason };
  if (code === SERVICE_RESTART)
    return { kind: 'dropped', code: 'server_restart', reason: `closed ${code} ${reason}`, soon: true };
  // 1006: no close frame came, the connection failed or was cut (a browser says no more).
  const dropCode = code === ABNORMAL_CLOSURE ? 'network' : 'ended';
  return { kind: 'dropped', code: dropCode, reason: `closed ${code} ${reason}`.trim() };
}
