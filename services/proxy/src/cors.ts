/**
 * CORS headers the proxy adds itself (spec forwarding rule 5): on answers to requests refused for
 * want of a valid token, on what broker and stream targets answer when nothing is awaited (202,
 * preflights), and on correlated responses and their time-outs. A plainly forwarded response keeps
 * whatever CORS headers its target sent: the proxy adds none (RIG's rule, docs "CORS").
 */

export interface Cors {
  /** For 401s, 202s, correlated responses and 504s. */
  readonly simple: Readonly<Record<string, string>>;
  /** For preflights of endpoints publishing events: they carry tokens and JSON bodies. */
  readonly preflight: Readonly<Record<string, string>>;
}

export function corsHeaders(origin: string): Cors {
  return {
    simple: {
      'access-control-allow-origin': origin,
      'access-control-allow-methods': '*',
      'access-control-allow-headers': 'content-type',
    },
    preflight: {
      'access-control-allow-origin': origin,
      'access-control-allow-methods': '*',
      'access-control-allow-headers': 'content-type,authorization',
    },
  };
}
