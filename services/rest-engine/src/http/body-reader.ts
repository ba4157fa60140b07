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
 * A parsed body (JSON, XML, form) nested deeper than MAX_JSON_DEPTH is refused with 400; a form
 * with more than rest.server.max-parameters pairs, an XML document with more than
 * rest.server.max-xml-nodes elements and attributes, or an upload with more parts, files or fields
 * than rest.multipart.* allow, with 413.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import type { QueryValue, UploadedFile } from '@gatehouse/functions';
import {
  assertJsonDepth,
  exceedsJsonMembers,
  HttpError,
  JsonTooDeepError,
  JsonTooManyMembersError,
  readBody,
} from '@gatehouse/service-kit';
import busboy from 'busboy';
import {
  addValue,
  exceedsParameters,
  parseQueryString,
  queryMap,
  tooManyParameters,
} from './query-string.ts';
import { parseXml, XmlDoctypeError, XmlTooDeepError, XmlTooLargeError } from './xml.ts';

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
  /** rest.server.max-parameters: a form body with more is refused (413). */
  maxParameters: number;
  /** rest.server.max-xml-nodes: an XML body with more elements and attributes is refused (413). */
  maxXmlNodes: number;
  /** rest.server.max-json-members: a JSON body with more keys and array items is refused (413). */
  maxJsonMembers: number;
  upload: boolean;
  /** Keep the bytes as they are (an HTTP relay forwards them untouched). */
  raw: boolean;
  /** Counts of multipart parts, files and fields (413 beyond). */
  multipart: MultipartLimits;
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
    return readMultipart(req, opts.limit, opts.multipart);
  }
  if (!opts.raw && chunked && kindOf(type) === 'bytes') return streamBody(req, opts);
  if (declaredLength === undefined && !chunked) return { contentLength: 0 };

  const bytes = await readBody(req, opts.limit);
  const contentLength = bytes.length;
  if (opts.raw) return { body: bytes, contentLength };
  switch (kindOf(type)) {
    case 'json':
      // Counted on the bytes: parsing, copying and serialising cost per key, so 90,000 keys in
      // 1 MiB held the event loop a tenth of a second where the scan takes a millisecond.
      if (exceedsJsonMembers(bytes, opts.maxJsonMembers))
        throw new JsonTooManyMembersError('The body', 'rest.server.max-json-members', opts.maxJsonMembers);
      return { body: withinDepth(parseJson(bytes.toString('utf8')), opts), contentLength };
    case 'xml': {
      const text = bytes.toString('utf8');
      if (req.headers['x-raw-xml'] === 'true') return { body: text, contentLength };
      return { body: withinDepth(parseXmlOrText(text, opts), opts), contentLength };
    }
    case 'form': {
      const text = bytes.toString('utf8');
      if (exceedsParameters(text, opts.maxParameters))
        throw new HttpError(413, tooManyParameters('The form body', opts.maxParameters));
      const formFields = withinDepth(parseQueryString(text), opts);
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

/** A document nested beyond what the XML parser takes is too deep (400), one too large 413, not text. */
function parseXmlOrText(text: string, opts: BodyOptions): unknown {
  if (text.trim() === '') return {};
  try {
    return parseXml(text, opts.maxXmlNodes);
  } catch (err) {
    if (err instanceof XmlTooDeepError) throw new JsonTooDeepError('the body', opts.maxJsonDepth);
    if (err instanceof XmlDoctypeError)
      throw new HttpError(400, 'XML bodies with a document type declaration (DOCTYPE) are refused');
    if (err instanceof XmlTooLargeError)
      throw new HttpError(
        413,
        `The XML body has more than ${opts.maxXmlNodes} elements and attributes (rest.server.max-xml-nodes)`,
      );
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

/** Count bounds of a multipart body (rest.multipart.*); its bytes are bounded by the body limit. */
export interface MultipartLimits {
  parts: number;
  files: number;
  fields: number;
}

/**
 * Collects the files and fields of a multipart body. Every stream's 'error' is handled (busboy
 * emits `Unexpected end of form` on a file stream, which ended the process when nobody listened),
 * the raw bytes and the parts, files and fields are counted, and once the answer is decided the
 * parser is unpiped and destroyed and what it held dropped. busboy itself caps each part's header
 * at 16 KiB and 2,000 pairs (a larger one is `Malformed part header`, 400).
 */
function readMultipart(req: IncomingMessage, limit: number, limits: MultipartLimits): Promise<ParsedBody> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        limits: { fileSize: limit, fieldSize: limit, ...limits },
      });
    } catch (err) {
      reject(new HttpError(400, (err as Error).message));
      return;
    }
    let files: UploadedFile[] = [];
    let fields = queryMap();
    let received = 0;
    let content = 0;
    let settled = false;
    /** The body is settled: the request's listeners are no longer needed. */
    const detach = () => {
      settled = true;
      req.off('data', countBytes);
      req.off('close', onClose);
    };
    const stop = () => {
      detach();
      req.unpipe(parser);
      parser.destroy();
      files = [];
      fields = queryMap();
    };
    const fail = (err: HttpError) => {
      if (settled) return;
      stop();
      // The answer's writer reads the rest on briefly and closes (lingerThenClose).
      reject(err);
    };
    const tooMany = (what: string, setting: string, n: number) => () =>
      fail(new HttpError(413, `Multipart body has more than ${n} ${what} (${setting})`));
    const countBytes = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) fail(tooLarge(limit));
    };
    const onClose = () => {
      if (!req.complete) fail(new HttpError(400, 'Request body ended early'));
    };
    req.on('data', countBytes);
    req.on('close', onClose);
    req.on('error', () => fail(new HttpError(400, 'Request body ended early')));
    parser.on('file', (fieldName, stream, info) => {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('error', (err: Error) => fail(invalidMultipart(err)));
      stream.on('data', (chunk: Buffer) => {
        content += chunk.length;
        size += chunk.length;
        if (!settled) chunks.push(chunk);
      });
      stream.on('limit', () => fail(tooLarge(limit)));
      stream.on('end', () => {
        if (settled) return;
        const data = Buffer.concat(chunks, size);
        files.push({ fieldName, fileName: info.filename ?? '', contentType: info.mimeType, size, data });
      });
    });
    parser.on('field', (name, value) => {
      content += value.length;
      if (!settled) addValue(fields, name, value);
    });
    parser.on('partsLimit', tooMany('parts', 'rest.multipart.max-parts', limits.parts));
    parser.on('filesLimit', tooMany('files', 'rest.multipart.max-files', limits.files));
    parser.on('fieldsLimit', tooMany('fields', 'rest.multipart.max-fields', limits.fields));
    parser.on('error', (err: Error) => fail(invalidMultipart(err)));
    parser.on('close', () => {
      if (settled) return;
      detach();
      const first = files[0];
      resolve({
        contentLength: content,
        files,
        formFields: fields,
        ...(first ? { stream: bufferStream(first.data), streamRoute: `stream.${randomUUID()}.in` } : {}),
      });
    });
    req.pipe(parser);
  });
}

function invalidMultipart(err: Error): HttpError {
  return new HttpError(400, `Invalid multipart body - ${err.message}`);
}

function bufferStream(data: Buffer): Readable {
  const stream = new PassThrough();
  stream.end(data);
  return stream;
}
