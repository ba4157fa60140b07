/**
 * Long-polling: `GET /_gw/v1/connection/longpolling` again and again. The first answer of a new
 * connection is `"ok"`; the next ones `{"last_event_id": …, "events": […]}`. The transport keeps the
 * connection itself and names it on every poll (`?pollToken=&lastEventId=&lastPrivateEventId=`,
 * from the answers' `Gatehouse-Connection-Token` and `Gatehouse-Last-Private-Event-Id` headers and
 * their `last_event_id`), and sends no cookies (`credentials: 'omit'`): a browser's cookie jar is
 * shared by every tab of an origin, and two clients polling with it took each other's connection.
 * A new connection starts from `?lastEventId=`, so it resumes what another transport started. A poll
 * answered as a new connection (`"ok"`) means the old one ended: as expired when the JWT did (the
 * client renews it), else as dropped, and the client connects again at once from its position.
 * `close()` sends `DELETE` for the connection, so the gateway forgets it at once. The gateway's own
 * events come first in an answer,
 * and its `gateway_events` says how many.
 */
import { bearer, connectUrl } from '../connect-url.ts';
import { jwtExpired } from '../jwt-expiry.ts';
import type { CloudEvent } from '../types.ts';
import { FetchConnection } from './fetch-connection.ts';
import { retryAfterMs, type Transport, type TransportEnd } from './transport.ts';

interface PollAnswer {
  last_event_id: string;
  /** How many of `events`, from the first, are the gateway's own. */
  gateway_events?: number;
  events: CloudEvent[];
}

export const longpollTransport: Transport = {
  name: 'longpolling',
  subscriptionsPath: 'longpolling',
  renewsInPlace: false,
  open(params, handlers) {
    const named: Record<string, string | undefined> = { lastEventId: params.lastEventId };
    const connection = new FetchConnection(handlers, params.idleTimeoutMs).run(async (conn) => {
      for (let first = true; !conn.over; first = false) {
        const res = await fetch(connectUrl(params, 'longpolling', named), {
          headers: bearer(params.token),
          credentials: 'omit',
          cache: 'no-store',
          signal: conn.abort.signal,
        });
        conn.alive();
        const body = await res.text();
        if (res.status !== 200)
          return conn.end({
            kind: 'refused',
            status: res.status,
            message: body,
            retryMs: retryAfterMs(res.headers.get('retry-after')),
          });
        const token = res.headers.get('gatehouse-connection-token');
        if (token) named['pollToken'] = token;
        const acknowledge = res.headers.get('gatehouse-last-private-event-id');
        if (acknowledge) named['lastPrivateEventId'] = acknowledge;
        if (first) handlers.opened();
        if (conn.over) return;
        const answer = JSON.parse(body) as PollAnswer | 'ok';
        // A new connection after the first poll: ours ended. Its JWT expired, or the gateway ended
        // it (an operator's disconnect, said in an answer before), or forgot it (no poll reached it
        // for LONGPOLL_SESSION_TTL: a suspended tab, a poll stuck in a starved replica's accept
        // queue). Only the first needs a new JWT: a fixed one still valid connects again, at once,
        // from its position.
        if (answer === 'ok' && !first) return conn.end(endedByGateway(params.token));
        if (answer === 'ok') {
          // Made: the gateway's record holds where it starts (after an ack session's position, not
          // the client's), which a cursor named on the next poll would override.
          delete named['lastEventId'];
          continue;
        }
        const own = answer.gateway_events ?? 0;
        for (const [n, event] of answer.events.entries()) {
          if (conn.over) return;
          if (n >= own) handlers.event(event, undefined);
          else if (event.type === 'gw.session_expired') return conn.end({ kind: 'expired' });
          else handlers.gatewayEvent(event, undefined);
        }
        if (answer.last_event_id) named['lastEventId'] = answer.last_event_id;
        if (answer.last_event_id && !conn.over) handlers.position(answer.last_event_id);
      }
    });
    return {
      // The client is done with it (closed, replaced, offline): the gateway forgets it now rather
      // than listing it and holding its place until LONGPOLL_SESSION_TTL.
      close() {
        connection.close();
        if (named['pollToken']) goodbye(params, named['pollToken']);
      },
    };
  },
};

/** `DELETE` of the connection; `keepalive` lets it outlive a page being closed. Failures do not matter. */
function goodbye(params: Parameters<Transport['open']>[0], pollToken: string): void {
  fetch(connectUrl(params, 'longpolling', { pollToken }), {
    method: 'DELETE',
    credentials: 'omit',
    keepalive: true,
  }).then(
    (res) => res.body?.cancel().catch(() => {}),
    () => {},
  );
}

/** How a connection the gateway no longer knew ended: by its JWT's expiry, or forgotten. */
function endedByGateway(token: string | undefined): TransportEnd {
  if (token !== undefined && jwtExpired(token)) return { kind: 'expired' };
  return { kind: 'dropped', code: 'ended', reason: 'the gateway forgot the connection', soon: true };
}
