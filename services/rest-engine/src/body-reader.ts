/**
 * Reads a request body by its content type, refusing more than the configured limit with 413:
 * - `application/json` (and `+json`): an object or array; text that is neither stays a string;
 * - `application/xml`, `text/xml` (and `+xml`): an object (root element dropped), or the raw text
 *   when `x-raw-xml: true` or when it does not parse;
 * - `application/x-www-form-urlencoded`: a map, also merged into the query parameters;
 * - `text/*`: a string;
 * - `multipart/form-data` on a POST to an `upload: true` endpoint: the uploaded files (fields join
 *   the query parameters);
 * - anything else: a Buffer, or, when the request has no content length (chunked), a stream of the
 *   bytes as they arrive.
 * A parsed body (JSON, XML, form) nested deeper than MAX_JSON_DEPTH is refused with 400.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import type { QueryValue, UploadedFile } from '@gatehouse/functions';
import { assertJsonDepth, HttpError, JsonTooDeepError, readBody } from '@gatehouse/service-kit';
import busboy from 'busboy';
import { addValue, parseQueryString, queryMap } from './query-string.ts';
import { parseXml, XmlTooDeepError } from './xml.ts';

export interface ParsedBody {
  body?: unknown;
  contentLength: number;
  stream?: Readable;
  streamRoute?: string;
  files?: UploadedFile[];
  /** Form fields, to be merged into the query parameters. */
  formFields?: Record<string, QueryValue>;
}

export interface BodyOptions {
  limit: number;
  /** MAX_JSON_DEPTH. */
  maxJsonDepth: number;
  upload: boolean;
  /** Keep the bytes as they are (an HTTP relay forwards them untouched). */
  raw: boolean;
  /** Called when a streamed body goes over the limit after the function got it. */
  onStreamTooLarge: (err: HttpError) => void;
}

export function tooLarge(limit: number): HttpError {
  return new HttpError(413, `Request body exceeds the limit of ${limit} bytes`);
}

export async function readRequestBody(req: IncomingMessage, opts: BodyOptions): Promise<ParsedBody> {
  const declared = req.headers['content-length'];
  const declaredLength = declared === undefined ? undefined : Number(declared);
  if (declaredLength !== undefined && declaredLength > opts.limit) throw tooLarge(opts.limit);
  const type = mediaType(req.headers['content-type']);
  const chunked = declaredLength === undefined && req.headers['transfer-encoding'] !== undefined;

  if (!opts.raw && opts.upload && req.method === 'POST' && type === 'multipart/form-data') {
    return readMultipart(req, opts.limit);
  }
  if (!opts.raw && chunked && kindOf(type) === 'bytes') return streamBody(req, opts);
  if (declaredLength === undefined && !chunked) return { contentLength: 0 };

  const bytes = await readBody(req, opts.limit);
  const contentLength = bytes.length;
  if (opts.raw) return { body: bytes, contentLength };
  switch (kindOf(type)) {
    case 'json':
      return { body: withinDepth(parseJson(bytes.toString('utf8')), opts), contentLength };
    case 'xml': {
      const text = bytes.toString('utf8');
      if (req.headers['x-raw-xml'] === 'true') return { body: text, contentLength };
      return { body: withinDepth(parseXmlOrText(text, opts.maxJsonDepth), opts), contentLength };
    }
    case 'form': {
      const formFields = withinDepth(parseQueryString(bytes.toString('utf8')), opts);
      return { body: formFields, formFields, contentLength };
    }
    case 'text':
      return { body: bytes.toString('utf8'), contentLength };
    default:
      return { body: contentLength > 0 ? bytes : undefined, contentLength };
  }
}

type BodyKind = 'json' | 'xml' | 'form' | 'text' | 'bytes';

function kindOf(type: string): BodyKind {
  if (type === 'application/json' || type.endsWith('+json')) return 'json';
  if (type === 'application/xml' || type === 'text/xml' || type.endsWith('+xml')) return 'xml';
  if (type === 'application/x-www-form-urlencoded') return 'form';
  if (type.startsWith('text/')) return 'text';
  return 'bytes';
}

export function mediaType(header: string | undefined): string {
  if (!header) return '';
  const semi = header.indexOf(';');
  return (semi < 0 ? header : header.slice(0, semi)).trim().toLowerCase();
}

function withinDepth<T>(body: T, opts: BodyOptions): T {
  assertJsonDepth(body, opts.maxJsonDepth, 'the body');
  return body;
}

/** An object or array; an empty body is `{}`; anything else stays text. */
function parseJson(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return {};
  const first = trimmed[0];
  if (first !== '{' && first !== '[') return text;
  try {
    return JSON.parse(trimmed);
  } catch {
    return text;
  }
}

/** A document nested beyond what the XML parser takes is too deep (400), not text. */
function parseXmlOrText(text: string, maxJsonDepth: number): unknown {
  if (text.trim() === '') return {};
  try {
    return parseXml(text);
  } catch (err) {
    if (err instanceof XmlTooDeepError) throw new JsonTooDeepError('the body', maxJsonDepth);
    return text;
  }
}

/** Hands the body on as it arrives; past the limit the stream fails and the caller hears of it. */
function streamBody(req: IncomingMessage, opts: BodyOptions): ParsedBody {
  const stream = new PassThrough();
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > opts.limit && !stream.destroyed) {
      const err = tooLarge(opts.limit);
      req.unpipe(stream);
      stream.destroy(err);
      opts.onStreamTooLarge(err);
    }
  });
  req.on('error', (err) => stream.destroy(err));
  req.pipe(stream);
  return { contentLength: 0, stream, streamRoute: `stream.${randomUUID()}.in` };
}

function readMultipart(req: IncomingMessage, limit: number): Promise<ParsedBody> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { fileSize: limit, fieldSize: limit } });
    } catch (err) {
      reject(new HttpError(400, (err as Error).message));
      return;
    }
    const files: UploadedFile[] = [];
    const fields = queryMap();
    let total = 0;
    let failed = false;
    const fail = (err: HttpError) => {
      if (failed) return;
      failed = true;
      req.unpipe(parser);
      req.resume();
      reject(err);
    };
    parser.on('file', (fieldName, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => {
        total += chunk.length;
        if (total > limit) fail(tooLarge(limit));
        else chunks.push(chunk);
      });
      stream.on('limit', () => fail(tooLarge(limit)));
      stream.on('close', () => {
        const data = Buffer.concat(chunks);
        files.push({
          fieldName,
          fileName: info.filename ?? '',
          contentType: info.mimeType,
          size: data.length,
          data,
        });
      });
    });
    parser.on('field', (name, value) => {
      total += value.length;
      if (total > limit) fail(tooLarge(limit));
      else addValue(fields, name, value);
    });
    parser.on('error', (err: Error) => fail(new HttpError(400, `Invalid multipart body - ${err.message}`)));
    parser.on('close', () => {
      if (failed) return;
      const first = files[0];
      resolve({
        contentLength: total,
        files,
        formFields: fields,
        ...(first ? { stream: bufferStream(first.data), streamRoute: `stream.${randomUUID()}.in` } : {}),
      });
    });
    req.pipe(parser);
  });
}

function bufferStream(data: Buffer): Readable {
  const stream = new PassThrough();
  stream.end(data);
  return stream;
}
