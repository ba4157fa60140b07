/**
 * Writes a function's result as the HTTP response (what `async.http.response` does):
 * - an EventEnvelope gives status, headers and body; a plain value is the body with status 200;
 * - function headers go through the endpoint's response transform; `content-type` and `set-cookie`
 *   are honoured as given and never transformed; `trace_id`, `trace_path` and `my_*` never leave;
 * - objects, arrays, numbers and booleans become JSON, or XML / an HTML page when the caller's
 *   Accept prefers those; strings are text; Buffers are bytes; a Readable is streamed (chunked);
 * - an error status (≥ 400) with a text body or none becomes the standard error body, unless the
 *   function set a content type (then the text is sent as it is, as Mercury's /livenessprobe does);
 * - every answer, errors included, gets the `add` headers of the endpoint's response transform;
 * - a HEAD answer carries the length the GET would have: the body's, or a `content-length` the
 *   function declared without computing the body (Mercury's way); a stream keeps a declared length.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { isEventEnvelope } from '@gatehouse/functions';
import { contentTypeOf, preferredFormat } from './content-negotiation.ts';
import { renderError } from './error-renderer.ts';
import { type HeaderTransform, transformHeaders } from '../endpoints/index.ts';
import { toXml } from './xml.ts';

export interface ResponseTarget {
  res: ServerResponse;
  head: boolean;
  accept: string | undefined;
  /** Headers the engine adds to every answer of the endpoint (CORS, correlation id); mutated. */
  headers: OutgoingHttpHeaders;
  responseTransform: HeaderTransform | undefined;
}

const hiddenHeaders = new Set(['trace_id', 'trace_path']);
const framingHeaders = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);

/** Writes the result; returns the status sent. */
export function writeResult(target: ResponseTarget, result: unknown): number {
  let status = 200;
  let body = result;
  let contentType: string | undefined;
  /** A length the function or upstream declared: kept for a stream, and for a bodiless HEAD. */
  let declaredLength: number | undefined;
  const headers = target.headers;
  if (isEventEnvelope(result)) {
    status = result.getStatus() ?? 200;
    body = result.getBody();
    const own: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(result.getHeaders())) {
      if (name === 'content-type') contentType = String(value);
      else if (name === 'set-cookie') headers['set-cookie'] = value;
      else if (name === 'content-length') declaredLength = contentLengthOf(value);
      else if (!hiddenHeaders.has(name) && !name.startsWith('my_') && !framingHeaders.has(name))
        own[name] = value;
    }
    if (target.responseTransform) transformHeaders(own, target.responseTransform, (s) => s);
    Object.assign(headers, own);
  } else {
    addTransformHeaders(target);
  }

  // An error message becomes the standard error body, unless the function chose its content type.
  if (status >= 400 && (body === undefined || body === null || (isPlainMessage(body) && !contentType))) {
    return writeError(target, status, body === undefined || body === null ? `HTTP ${status}` : String(body));
  }
  if (isReadable(body)) return writeStream(target, status, body, contentType, declaredLength);

  let payload: string | Buffer;
  if (body === undefined || body === null) {
    payload = '';
  } else if (typeof body === 'string') {
    payload = body;
    contentType ??=
      preferredFormat(target.accept) === 'html' ? contentTypeOf.html : 'text/plain; charset=utf-8';
  } else if (Buffer.isBuffer(body) || body instanceof Uint8Array) {
    payload = Buffer.isBuffer(body) ? body : Buffer.from(body);
    contentType ??= 'application/octet-stream';
  } else {
    const format = contentType ? formatOfContentType(contentType) : preferredFormat(target.accept);
    contentType ??= contentTypeOf[format];
    payload = format === 'xml' ? toXml(body) : format === 'html' ? htmlWrapped(body) : JSON.stringify(body);
  }
  if (contentType !== undefined) headers['content-type'] = contentType;
  const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
  // Mercury's HEAD handlers declare the GET's length instead of computing the body.
  headers['content-length'] =
    target.head && length === 0 && declaredLength !== undefined ? declaredLength : length;
  target.res.writeHead(status, headers);
  if (target.head) target.res.end();
  else target.res.end(payload);
  return status;
}

/** The standard error body, in the format the caller's Accept prefers. */
export function writeError(target: ResponseTarget, status: number, message: string): number {
  const { contentType, body } = renderError(status, message, target.accept);
  addTransformHeaders(target);
  const headers = target.headers;
  headers['content-type'] = contentType;
  headers['content-length'] = Buffer.byteLength(body);
  // A 503 is an outage (a broker, the registry, an upstream): say when to retry, as every service does.
  if (status === 503 && headers['retry-after'] === undefined) headers['retry-after'] = '1';
  target.res.writeHead(status, headers);
  if (target.head) target.res.end();
  else target.res.end(body);
  return status;
}

function writeStream(
  target: ResponseTarget,
  status: number,
  body: Readable,
  contentType: string | undefined,
  declaredLength: number | undefined,
) {
  const headers = target.headers;
  headers['content-type'] = contentType ?? 'application/octet-stream';
  // A relayed answer keeps its length (a HEAD then says what the GET would send); else chunked.
  if (declaredLength !== undefined) headers['content-length'] = declaredLength;
  target.res.writeHead(status, headers);
  if (target.head) {
    body.destroy();
    target.res.end();
  } else if (target.res.destroyed) {
    body.destroy(); // the client left while the source was coming: release it (an upstream relay)
  } else {
    // Either side failing ends both: a client that goes away stops the source (an upstream relay
    // is cut off, not left paused), a source that fails cuts the response short. pipe() and two
    // listeners rather than stream.pipeline(), which makes and aborts an AbortController per call:
    // the AbortError's stack was the largest single cost of a relayed answer (--cpu-prof, issue 25).
    body.pipe(target.res);
    body.once('error', () => target.res.destroy());
    target.res.once('close', () => {
      if (!body.readableEnded) body.destroy();
    });
  }
  return status;
}

/**
 * The `add` headers of the endpoint's response transform, on every answer (errors included). Its
 * `keep` and `drop` apply to a function's own headers, which an engine error does not have.
 */
function addTransformHeaders(target: ResponseTarget): void {
  const t = target.responseTransform;
  if (t) for (const [name, value] of t.add) target.headers[name] = value;
}

function contentLengthOf(value: unknown): number | undefined {
  const text = String(Array.isArray(value) ? value[0] : value).trim();
  return /^\d{1,15}$/.test(text) ? Number(text) : undefined;
}

/** A string that is a message rather than a JSON or XML document. */
function isPlainMessage(body: unknown): boolean {
  if (typeof body !== 'string') return false;
  const first = body.trimStart()[0];
  return first !== '{' && first !== '[' && first !== '<';
}

function isReadable(body: unknown): body is Readable {
  return typeof body === 'object' && body !== null && typeof (body as Readable).pipe === 'function';
}

function formatOfContentType(contentType: string): 'json' | 'xml' | 'html' {
  const type = contentType.toLowerCase();
  if (type.includes('xml')) return 'xml';
  if (type.includes('html')) return 'html';
  return 'json';
}

function htmlWrapped(body: unknown): string {
  const json = JSON.stringify(body, null, 2).replace(
    /[&<>]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!,
  );
  return `<html><body><pre>\n${json}\n</pre></body></html>`;
}
