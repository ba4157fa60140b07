/**
 * The built-in HTTP relay (`service: http://host:port` in rest.yaml): forwards the request to
 * another server, with the path rewritten by `url_rewrite` (first prefix replaced by the second),
 * the headers after the endpoint's request transform, session information as extra headers, and
 * the body untouched. The upstream answer comes back as an EventEnvelope: a small one (a declared
 * length within `rest.relay.buffer-max-bytes`) with its body whole, any other as soon as its headers
 * arrive, with the response stream as its body, passed on as it comes, at the pace the client reads
 * it, and never held whole in memory (a large download or a client that stops reading would
 * otherwise make the engine hold the entire answer). relay-answer.ts receives it.
 *
 * The upstream request goes through undici's dispatch() (as the proxy service's goes through
 * undici): node:http's client cost the relay twice Mercury's CPU per request, undici's request()
 * a third more than dispatch() (issue 25; bench/README.md, mercury.bench.ts).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { AppException, EventEnvelope } from '@gatehouse/functions';
import { canonicalPath, hopByHopHeaders } from '@gatehouse/service-kit';
import { Agent, type Dispatcher } from 'undici';
import type { RelayTarget } from '../endpoints/index.ts';
import { RelayAnswer, type UpstreamAnswer } from './relay-answer.ts';
import { asciiLowerCase } from '../routing/index.ts';

/**
 * Not relayed either way: hop-by-hop, what the relay's own request sets (host, length, encoding),
 * and `expect` (undici refuses it: the relay sends the body it has, it does not ask first).
 */
const notRelayed = new Set([...hopByHopHeaders, 'host', 'content-length', 'accept-encoding', 'expect']);

/** One keep-alive connection pool per upstream origin (undici's Agent keeps them). */
const agent = new Agent();
const trustingAgent = new Agent({ connect: { rejectUnauthorized: false } });

export interface RelayInput {
  method: string;
  path: string;
  queryString: string | undefined;
  headers: Record<string, string>;
  session: Record<string, string> | undefined;
  body: Buffer | Readable | undefined;
  signal: AbortSignal;
  /** An answer declaring at most this many bytes is taken in whole (relay-answer.ts). */
  maxBufferBytes: number;
}

/**
 * The path the upstream gets: the canonical request path with `url_rewrite`'s first prefix replaced
 * by the second, as sent (never decoded: `%3F` stays inside its segment). The relay takes canonical
 * paths only (request-pipeline.ts makes them), so no `..` or `//` can reach the upstream and climb
 * out of the rewritten prefix; anything else is refused, not repaired. The prefix is compared
 * without case, as routing matched the endpoint (route-table.ts): `/PUBLIC/x` went upstream
 * unrewritten, to the upstream's root.
 */
export function upstreamPath(path: string, rewrite: RelayTarget['rewrite']): string {
  const canonical = canonicalPath(path);
  if (!canonical.ok || canonical.path !== path) throw new AppException(400, 'Invalid URL path');
  if (!rewrite) return path;
  const [from, to] = rewrite;
  if (asciiLowerCase(path.slice(0, from.length)) !== asciiLowerCase(from)) return path;
  const rewritten = to + path.slice(from.length);
  return rewritten.startsWith('/') ? rewritten : `/${rewritten}`;
}

/**
 * Relays the request to the configured origin: undici's dispatch gets that origin and the path
 * (upstreamPath) apart, so no client text is ever resolved against the origin.
 */
export async function relay(target: RelayTarget, input: RelayInput): Promise<EventEnvelope> {
  const path = upstreamPath(input.path, target.rewrite) + (input.queryString ? `?${input.queryString}` : '');
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.headers)) if (!notRelayed.has(k)) headers[k] = v;
  for (const [k, v] of Object.entries(input.session ?? {})) headers[k] = v;
  if (Buffer.isBuffer(input.body)) headers['content-length'] = String(input.body.length);
  const dispatcher = target.trustAllCert && target.origin.protocol === 'https:' ? trustingAgent : agent;
  const answer = await new Promise<UpstreamAnswer>((resolve, reject) => {
    dispatcher.dispatch(
      {
        origin: target.origin,
        path,
        method: input.method as Dispatcher.HttpMethod,
        headers,
        body: input.body ?? null,
      },
      new RelayAnswer(input.signal, input.maxBufferBytes, resolve, reject),
    );
  });
  return toEnvelope(answer.status, answer.headers, answer.body);
}

function toEnvelope(status: number, headers: IncomingHttpHeaders, body: Buffer | Readable): EventEnvelope {
  const envelope = new EventEnvelope().setStatus(status).setBody(body);
  for (const [k, v] of Object.entries(headers)) {
    // content-length stays: the response writer keeps it, so a relayed HEAD says what GET sends.
    if (v !== undefined && (k === 'content-length' || !notRelayed.has(k)) && k !== 'date')
      envelope.setHeader(k, v);
  }
  return envelope;
}
