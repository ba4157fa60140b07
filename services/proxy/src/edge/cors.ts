/**
 * CORS the proxy adds itself (spec forwarding rule 5): on answers to requests refused for want of
 * a valid token, on what broker and stream targets answer when nothing is awaited (202,
 * preflights), and on correlated responses and their time-outs. A plainly forwarded response keeps
 * whatever CORS headers its target sent: the proxy adds none (RIG's rule, docs "CORS"). The policy
 * (who gets an Access-Control-Allow-Origin) is CORS_ALLOWED_ORIGINS, as on every public surface.
 *
 * Preflights are answered here for event endpoints and for secured endpoints: a page sending its
 * token, or JSON, is preflighted, and a 404 there would hide the proxy's own 401 from it. An open
 * HTTP endpoint's preflight stays its target's (an OPTIONS endpoint forwards it), as in RIG.
 */
import type { PreflightRules } from '@gatehouse/service-kit';
import type { ApiDefinition } from '../definitions/index.ts';

/** Headers of the 401: a page may read the challenge too. */
export const refusedTokenHeaders = { 'access-control-expose-headers': 'www-authenticate' };

/** They carry tokens and JSON bodies, by any method; an API's own token header is allowed too. */
export function preflightRules(api: ApiDefinition): PreflightRules {
  const tokenHeader = api.auth.use_header ? api.auth.header_name.toLowerCase() : 'authorization';
  return {
    // Listed, not `*`: with credentials a browser reads `*` as a method named "*".
    methods: 'GET, HEAD, POST, PUT, PATCH, DELETE',
    headers: `content-type, authorization${tokenHeader === 'authorization' ? '' : `, ${tokenHeader}`}`,
  };
}
