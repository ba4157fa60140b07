/**
 * Headers of a forwarded request and of the response passed back (reference §2.4, spec forwarding
 * rules 1–4):
 * - hop-by-hop headers (service-kit's hopByHopHeaders, RFC 9110 §7.6.1) and the headers
 *   `connection` names are dropped both ways, which is also what HTTP/2 requires of connection
 *   headers;
 * - `host` becomes the target's host; `expect` is answered by this server, not forwarded;
 * - a `Forwarded` element (RFC 7239) naming the client, this proxy, the original host and scheme is
 *   appended to those a trusted proxy in front sent (RIG replaced the client's; appending is what
 *   the RFC asks), and `X-Forwarded-For` / `-Proto` / `-Host` likewise: the peer appended to the
 *   trusted list, the scheme and host a trusted proxy named, else this hop's. The request arrives
 *   here with the forwarding headers of an untrusted peer already dropped (proxy-service.ts,
 *   service-kit's forwarding-trust.ts), so a client cannot put words in the upstream's mouth;
 * - `traceparent`/`tracestate` carry a new span of the caller's trace (a new trace if none), the
 *   proxy's client span when tracing;
 * - response header names arrive lower-cased from undici, so duplicates differing in case cannot
 *   reach the client.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { hopByHopHeaders, peerAddress } from '@gatehouse/service-kit';
import {
  readTraceContextFromHeaders,
  startHop,
  type TraceContext,
  traceContextAttributes,
} from '@gatehouse/tracing';

export type HeaderMap = Record<string, string | string[]>;

/** Request headers this proxy replaces or answers itself. */
const replacedOnRequest = new Set(['host', 'expect', 'traceparent', 'tracestate']);

export interface UpstreamHeaderOptions {
  /** Host header for the target. */
  host: string;
  /** Merged over the request's headers (transform_request_headers); may override `host`. */
  addHeaders?: Record<string, string> | undefined;
  /** The context to send (the client span's when tracing); default: a new span of the caller's trace. */
  traceContext?: TraceContext | undefined;
}

export function upstreamHeaders(req: IncomingMessage, options: UpstreamHeaderOptions): HeaderMap {
  const source = req.headers;
  const named = connectionNamed(source['connection']);
  const out: HeaderMap = {};
  for (const name in source) {
    if (hopByHopHeaders.has(name) || replacedOnRequest.has(name) || name.charCodeAt(0) === 58) continue;
    if (named?.has(name)) continue;
    const value = source[name];
    if (value !== undefined) out[name] = value;
  }
  out['host'] = options.host;
  out['forwarded'] = forwardedValue(req);
  Object.assign(out, xForwarded(req));
  const trace = options.traceContext ?? startHop(readTraceContextFromHeaders(source));
  Object.assign(out, traceContextAttributes(trace));
  if (options.addHeaders !== undefined) Object.assign(out, options.addHeaders);
  return out;
}

/** The target's response headers minus hop-by-hop ones. */
export function downstreamHeaders(headers: IncomingHttpHeaders): HeaderMap {
  const named = connectionNamed(headers['connection']);
  const out: HeaderMap = {};
  for (const name in headers) {
    if (hopByHopHeaders.has(name)) continue;
    if (named?.has(name)) continue;
    const value = headers[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** The client's Forwarded elements (if any) followed by this hop's. */
export function forwardedValue(req: IncomingMessage): string {
  const socket = req.socket;
  const proto = (socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const host = req.headers['host'] ?? req.headers[':authority' as 'host'];
  let element = `for=${nodeName(socket.remoteAddress)};by=${nodeName(socket.localAddress)}`;
  if (host !== undefined) element += `;host=${quoted(host)}`;
  element += `;proto=${proto}`;
  const previous = req.headers['forwarded'];
  return previous === undefined || previous === '' ? element : `${previous}, ${element}`;
}

/** X-Forwarded-For with this hop's peer appended; -Proto and -Host as a trusted proxy said, else this hop's. */
function xForwarded(req: IncomingMessage): HeaderMap {
  const peer = peerAddress(req) || 'unknown';
  const previous = joined(req.headers['x-forwarded-for']);
  const out: HeaderMap = {
    'x-forwarded-for': previous === undefined ? peer : `${previous}, ${peer}`,
    'x-forwarded-proto':
      joined(req.headers['x-forwarded-proto']) ??
      ((req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http'),
  };
  const host = joined(req.headers['x-forwarded-host']) ?? req.headers['host'];
  if (host !== undefined) out['x-forwarded-host'] = host;
  return out;
}

function joined(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value.join(', ') : value;
  return text === undefined || text.trim() === '' ? undefined : text;
}

/** RFC 7239 §6: IPv6 addresses are bracketed and quoted; unknown peers are `unknown`. */
function nodeName(address: string | undefined): string {
  if (address === undefined || address === '') return 'unknown';
  const plain = address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
  return plain.includes(':') ? `"[${plain}]"` : plain;
}

function quoted(value: string): string {
  return /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(value) ? value : `"${value.replace(/["\\]/g, '\\$&')}"`;
}

function connectionNamed(value: string | string[] | undefined): Set<string> | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  const names = text
    .split(',')
    .map((t) => t.trim().toLowerCase())
    .filter((t) => t !== '' && t !== 'close' && t !== 'keep-alive');
  return names.length === 0 ? undefined : new Set(names);
}
