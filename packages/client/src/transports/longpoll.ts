/**
 * Long-polling: `GET /_gw/v1/connection/longpolling` again and again. The first answer of a new
 * connection is `"ok"` with its cookies; the next ones `{"last_event_id": …, "events": […]}`. The
 * connection lives in cookies (token, cursor, acknowledged private events): a browser keeps them
 * itself (`credentials: 'include'`, they are HttpOnly); where `fetch` has no cookie store (Node) the
 * transport keeps them. A new connection starts from `?lastEventId=`, so it resumes what another
 * transport started. A poll answered as a new connection means the old one ended (its JWT expired):
 * that ends this connection as expired, so the client renews its token.
 */
import { bearer, connectUrl } from '../connect-url.ts';
import type { CloudEvent } from '../types.ts';
import { FetchConnection } from './fetch-connection.ts';
import { retryAfterMs, type Transport } from './transport.ts';

interface PollAnswer {
  last_event_id: string;
  events: CloudEvent[];
}

export const longpollTransport: Transport = {
  name: 'longpolling',
  subscriptionsPath: 'longpolling',
  open(params, handlers) {
    const cookies = new Map<string, string>();
    const url = connectUrl(params, 'longpolling', { lastEventId: params.lastEventId });
    return new FetchConnection(handlers, params.idleTimeoutMs).run(async (conn) => {
      for (let first = true; !conn.over; first = false) {
        const cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
        const res = await fetch(url, {
          headers: { ...bearer(params.token), ...(cookie && { cookie }) },
          credentials: 'include',
          cache: 'no-store',
          signal: conn.abort.signal,
        });
        conn.alive();
        keepCookies(res.headers, cookies);
        const body = await res.text();
        if (res.status !== 200)
          return conn.end({
            kind: 'refused',
            status: res.status,
            message: body,
            retryMs: retryAfterMs(res.headers.get('retry-after')),
          });
        if (first) handlers.opened();
        if (conn.over) return;
        const answer = JSON.parse(body) as PollAnswer | 'ok';
        // A new connection after the first poll: ours ended, its cookie expired with its JWT (or it
        // was forgotten). The client gets a fresh JWT and connects again from its position.
        if (answer === 'ok' && !first) return conn.end({ kind: 'expired' });
        if (answer === 'ok') continue;
        for (const event of answer.events) {
          if (conn.over) return;
          if (event.type === 'gw.session_expired') return conn.end({ kind: 'expired' });
          handlers.event(event, undefined);
        }
        if (answer.last_event_id && !conn.over) handlers.position(answer.last_event_id);
      }
    });
  },
};

/** Node's fetch hands `Set-Cookie` to the caller (a browser never does: it keeps them itself). */
function keepCookies(headers: Headers, cookies: Map<string, string>): void {
  for (const line of headers.getSetCookie?.() ?? []) {
    const pair = line.split(';')[0] ?? '';
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    if (value === '' || /max-age=0/i.test(line)) cookies.delete(name);
    else cookies.set(name, value);
  }
}
