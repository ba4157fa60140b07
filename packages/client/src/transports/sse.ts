/**
 * Server-sent events read from a `fetch` body (not EventSource), so the connect can carry
 * `Authorization` and `Last-Event-ID` and a refusal's status is known. The `id:` of each event is its
 * stream position. The gateway's own events have an `origin: gateway` line, a field only the gateway
 * writes (no event's content can end a line of the frame). A `retry:` hint tells when to come back after the stream
 * ends.
 */
import { bearer, connectUrl } from '../connect-url.ts';
import type { CloudEvent } from '../types.ts';
import { FetchConnection } from './fetch-connection.ts';
import { SseParser } from './sse-parser.ts';
import { retryAfterMs, type Transport } from './transport.ts';

export const sseTransport: Transport = {
  name: 'sse',
  subscriptionsPath: 'sse',
  renewsInPlace: true,
  open(params, handlers) {
    const headers: Record<string, string> = { accept: 'text/event-stream', ...bearer(params.token) };
    if (params.lastEventId !== undefined) headers['last-event-id'] = params.lastEventId;
    const parser = new SseParser();
    return new FetchConnection(handlers, params.idleTimeoutMs).run(async (conn) => {
      const res = await fetch(connectUrl(params, 'sse'), {
        headers,
        signal: conn.abort.signal,
        cache: 'no-store',
      });
      if (res.status !== 200 || !res.body) {
        const message = await res.text().catch(() => '');
        return conn.end({
          kind: 'refused',
          status: res.status,
          message,
          retryMs: retryAfterMs(res.headers.get('retry-after')),
        });
      }
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done || conn.over) break;
        conn.alive();
        for (const m of parser.push(value)) {
          if (conn.over) break;
          const event = JSON.parse(m.data) as CloudEvent;
          if (m.origin !== 'gateway') handlers.event(event, m.id);
          else if (m.event === 'gw.session_expired') return conn.end({ kind: 'expired' });
          else handlers.gatewayEvent(event, m.id);
        }
      }
      conn.end({
        kind: 'dropped',
        code: 'ended',
        reason: 'the stream ended',
        ...(parser.retryMs !== undefined && { retryMs: parser.retryMs }),
      });
    });
  },
};
