/**
 * `gw_http_responses_total{surface, code}`: the HTTP answers of a surface (public, internal) by
 * status code, so every service's 5xx ratio is one expression, whatever made the answer (a
 * service, the host's 404, a 503 for a store that is down). Counted when the response closes, with
 * the status its headers carried: a stream counts when it ends, a request abandoned before any
 * answer not at all. WebSocket upgrades are not HTTP responses and are not counted.
 */
import type { ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { counter } from './metrics.ts';

export type Surface = 'public' | 'internal';

/** Returns `track(res)`, to call once per request as it arrives. */
export function countResponses(registry: Registry, surface: Surface): (res: ServerResponse) => void {
  const closed = responseCounter(registry, surface);
  return (res) => {
    // A response closes once: `on` spares the wrapper `once` makes per call (a bound function).
    res.on('close', closed);
  };
}

/**
 * The counting itself, as a `close` listener (`this` is the response) for a host that calls it
 * from its own: a response holds each of its listeners for as long as it is open, and a third one
 * grows node's listener array to ~20 slots (an SSE stream is open for hours, 10,000 times).
 */
export function responseCounter(registry: Registry, surface: Surface): (this: ServerResponse) => void {
  const responses = counter(registry, {
    name: 'gw_http_responses_total',
    help: 'HTTP responses by surface (public edge, internal API) and status code, counted when they close',
    labelNames: ['surface', 'code'],
  });
  // The labelled child of each status seen, so a response does not hash its label set.
  const byCode = new Map<number, { inc(): void }>();
  // One function for every response: no closure per request.
  return function (this: ServerResponse) {
    if (!this.headersSent) return;
    let child = byCode.get(this.statusCode);
    if (child === undefined) {
      child = responses.labels({ surface, code: String(this.statusCode) });
      byCode.set(this.statusCode, child);
    }
    child.inc();
  };
}
