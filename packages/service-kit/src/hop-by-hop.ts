/**
 * Hop-by-hop headers (RFC 9110 §7.6.1): they describe one connection, so whatever passes a
 * message on (the proxy forwarding a request and its answer, a correlated response, the REST
 * engine's HTTP relay) drops them, together with the headers `Connection` names. HTTP/2 forbids
 * them outright. `proxy-connection` is the non-standard one old clients still send;
 * `http2-settings` belongs to an h2c upgrade.
 */
export const hopByHopHeaders: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'http2-settings',
]);
