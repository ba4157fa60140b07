/**
 * The built-in HTTP relay (`service: http://host:port` in rest.yaml): forwards the request to
 * another server, with the path rewritten by `url_rewrite` (first prefix replaced by the second),
 * the headers after the endpoint's request transform, session information as extra headers, and
 * the body untouched; the upstream answer comes back as an EventEnvelope as soon as its headers
 * arrive, with the response stream as its body: the body is passed on as it comes, at the pace the
 * client reads it, and never held whole in memory (a large download or a client that stops reading
 * would otherwise make the engine hold the entire answer).
 */
import { Agent as HttpAgent, type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { EventEnvelope } from '@gatehouse/functions';
import { hopByHopHeaders } from '@gatehouse/service-kit';
import type { RelayTarget } from './endpoint.ts';

/** Not relayed either way: hop-by-hop, and what the relay's own request sets (host, length, encoding). */
const notRelayed = new Set([...hopByHopHeaders, 'host', 'content-length', 'accept-encoding']);

const httpAgent = new HttpAgent({ keepAlive: true });
const httpsAgent = new HttpsAgent({ keepAlive: true });
const trustingAgent = new HttpsAgent({ keepAlive: true, rejectUnauthorized: false });

export interface RelayInput {
  method: string;
  path: string;
  queryString: string | undefined;
  headers: Record<string, string>;
  session: Record<string, string> | undefined;
  body: Buffer | Readable | undefined;
  signal: AbortSignal;
}

export function rewritePath(path: string, rewrite: RelayTarget['rewrite']): string {
  if (!rewrite || !path.startsWith(rewrite[0])) return path;
  return rewrite[1] + path.slice(rewrite[0].length) || '/';
}

export function relay(target: RelayTarget, input: RelayInput): Promise<EventEnvelope> {
  const path = rewritePath(input.path, target.rewrite) + (input.queryString ? `?${input.queryString}` : '');
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.headers)) if (!notRelayed.has(k)) headers[k] = v;
  for (const [k, v] of Object.entries(input.session ?? {})) headers[k] = v;
  if (Buffer.isBuffer(input.body)) headers['content-length'] = String(input.body.length);
  const https = target.origin.protocol === 'https:';
  const send = https ? httpsRequest : httpRequest;
  const agent = https ? (target.trustAllCert ? trustingAgent : httpsAgent) : httpAgent;
  return new Promise((resolve, reject) => {
    const req = send(
      target.origin,
      { method: input.method, path, headers, agent, signal: input.signal },
      (res) => resolve(toEnvelope(res.statusCode ?? 502, res.headers, res)),
    );
    req.on('error', (err) => reject(err));
    if (input.body === undefined) req.end();
    else if (Buffer.isBuffer(input.body)) req.end(input.body);
    else input.body.pipe(req);
  });
}

function toEnvelope(status: number, headers: IncomingHttpHeaders, body: Readable): EventEnvelope {
  const envelope = new EventEnvelope().setStatus(status).setBody(body);
  for (const [k, v] of Object.entries(headers)) {
    // content-length stays: the response writer keeps it, so a relayed HEAD says what GET sends.
    if (v !== undefined && (k === 'content-length' || !notRelayed.has(k)) && k !== 'date')
      envelope.setHeader(k, v);
  }
  return envelope;
}
