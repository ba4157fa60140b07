/**
 * CORS the proxy adds itself (spec forwarding rule 5): on answers to requests refused for want of
 * a valid token, on what broker and stream targets answer when nothing is awaited (202,
 * preflights), and on correlated responses and their time-outs. A plainly forwarded response keeps
 * whatever CORS headers its target sent: the proxy adds none (RIG's rule, docs "CORS"). The policy
 * (who gets an Access-Control-Allow-Origin) is CORS_ALLOWED_ORIGINS, as on every public surface.
 */
import type { PreflightRules } from '@gatehouse/service-kit';

/** Preflights of endpoints publishing events: they carry tokens and JSON bodies, by any method. */
export const eventEndpointPreflight: PreflightRules = {
  // Listed, not `*`: with credentials a browser reads `*` as a method named "*".
  methods: 'GET, HEAD, POST, PUT, PATCH, DELETE',
  headers: 'content-type, authorization',
};
