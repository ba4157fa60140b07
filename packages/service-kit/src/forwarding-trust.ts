/**
 * Which forwarding headers a request may be believed on. `X-Forwarded-For`, `-Proto`, `-Host`,
 * `-Port`, `-Prefix`, `X-Real-IP` and `Forwarded` are written by whoever sent the request: only
 * a peer listed in TRUSTED_PROXIES (the edge nginx, an ingress controller) speaks for the client
 * there. From anyone else they are the client's own word: a client claiming `X-Forwarded-Proto:
 * https` over plain HTTP, or naming someone else's address. Such headers are dropped before a
 * request is forwarded and never read.
 */
import type { IncomingMessage } from 'node:http';
import type { BlockList } from 'node:net';
import { addressRanges, isTrustedAddress, peerAddress } from './client-address.ts';

export const forwardingHeaderNames = [
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'x-forwarded-port',
  'x-forwarded-prefix',
  'x-real-ip',
] as const;

export const trustedProxiesConfig = {
  TRUSTED_PROXIES: addressRanges(
    'addresses and CIDR ranges of the proxies in front of a service (edge nginx, ingress): only their X-Forwarded-For/-Proto/-Host and Forwarded are believed (the client address of the per-address budgets, the https flag of REST requests) and passed on by the proxy; from anyone else those headers are dropped',
  ),
};

/** Whether the request's peer is one of the trusted proxies. */
export function fromTrustedProxy(req: IncomingMessage, trusted: BlockList | undefined): boolean {
  return trusted !== undefined && isTrustedAddress(trusted, peerAddress(req));
}

/** Removes the forwarding headers of a request whose peer is not trusted; returns how many. */
export function dropUntrustedForwarding(req: IncomingMessage, trusted: BlockList | undefined): number {
  if (fromTrustedProxy(req, trusted)) return 0;
  let dropped = 0;
  for (const name of forwardingHeaderNames)
    if (req.headers[name] !== undefined) {
      delete req.headers[name];
      dropped++;
    }
  return dropped;
}

/**
 * The scheme the client used: TLS on this socket, else what the nearest trusted proxy says in
 * `X-Forwarded-Proto` (its last value, the one that proxy wrote), else `http`.
 */
export function requestScheme(req: IncomingMessage, trusted: BlockList | undefined): 'http' | 'https' {
  if ((req.socket as { encrypted?: boolean } | undefined)?.encrypted === true) return 'https';
  if (!fromTrustedProxy(req, trusted)) return 'http';
  const header = req.headers['x-forwarded-proto'];
  const values = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',');
  return values.at(-1)?.trim().toLowerCase() === 'https' ? 'https' : 'http';
}
