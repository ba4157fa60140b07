/**
 * The HTTP request as a function sees it. Built by the engine from the incoming request; every
 * lookup by name (header, cookie, path or query parameter, session key) ignores case. Header names
 * are lower-cased.
 */
import type { Readable } from 'node:stream';

export type QueryValue = string | string[];

export interface UploadedFile {
  /** Name of the form field the file came in. */
  fieldName: string;
  fileName: string;
  contentType: string;
  size: number;
  data: Buffer;
}

/** The plain data behind an AsyncHttpRequest, also what `toMap()` returns. */
export interface HttpRequestData {
  method: string;
  /** Decoded path in its original case, without the query string. */
  url: string;
  ip: string;
  https: boolean;
  headers: Record<string, string>;
  cookies?: Record<string, string>;
  session?: Record<string, string>;
  pathParameters?: Record<string, string>;
  queryParameters?: Record<string, QueryValue>;
  /** Raw query string without the `?`. */
  queryString?: string;
  body?: unknown;
  contentLength?: number;
  /** The body as a stream of bytes, when the request came without a content length. */
  stream?: Readable;
  streamRoute?: string;
  files?: UploadedFile[];
  timeoutSeconds?: number;
}

const none: Record<string, never> = Object.freeze({}) as Record<string, never>;

export class AsyncHttpRequest {
  private readonly data: HttpRequestData;

  constructor(data: HttpRequestData) {
    this.data = data;
  }

  getMethod(): string {
    return this.data.method;
  }

  getUrl(): string {
    return this.data.url || '/';
  }

  getRemoteIp(): string {
    return this.data.ip;
  }

  isHttps(): boolean {
    return this.data.https;
  }

  getHeader(name: string): string | undefined {
    const key = name.toLowerCase();
    return Object.hasOwn(this.data.headers, key) ? this.data.headers[key] : undefined;
  }

  getHeaders(): Readonly<Record<string, string>> {
    return this.data.headers;
  }

  getPathParameter(name: string): string | undefined {
    return lookup(this.data.pathParameters ?? none, name);
  }

  getPathParameters(): Readonly<Record<string, string>> {
    return this.data.pathParameters ?? none;
  }

  /** The first value of a query parameter. */
  getQueryParameter(name: string): string | undefined {
    const value = lookup(this.data.queryParameters ?? none, name);
    return Array.isArray(value) ? value[0] : value;
  }

  /** With a name: every value of that parameter (repeated keys); without: all parameters. */
  getQueryParameters(): Readonly<Record<string, QueryValue>>;
  getQueryParameters(name: string): string[];
  getQueryParameters(name?: string): Readonly<Record<string, QueryValue>> | string[] {
    const all = this.data.queryParameters ?? none;
    if (name === undefined) return all;
    const value = lookup(all, name);
    if (value === undefined) return [];
    return Array.isArray(value) ? value : [value];
  }

  getQueryString(): string | undefined {
    return this.data.queryString || undefined;
  }

  getCookie(name: string): string | undefined {
    return lookup(this.data.cookies ?? none, name);
  }

  getCookies(): Readonly<Record<string, string>> {
    return this.data.cookies ?? none;
  }

  /** Session information put there by the endpoint's authentication function. */
  getSessionInfo(): Readonly<Record<string, string>>;
  getSessionInfo(name: string): string | undefined;
  getSessionInfo(name?: string): Readonly<Record<string, string>> | string | undefined {
    const session = this.data.session ?? none;
    return name === undefined ? session : lookup(session, name);
  }

  getContentLength(): number {
    return this.data.contentLength ?? 0;
  }

  /**
   * The parsed body: an object for a JSON object or an XML document, an array for a JSON array, a
   * string for text, a Buffer for binary. With a class, a JSON object body becomes an instance of it.
   */
  getBody(): unknown;
  getBody<T extends object>(type: new () => T): T;
  getBody<T extends object>(type?: new () => T): unknown {
    const body = this.data.body;
    if (type === undefined) return body;
    if (typeof body !== 'object' || body === null || Array.isArray(body) || Buffer.isBuffer(body)) {
      throw new TypeError(`the request body is not a JSON object, cannot make a ${type.name} of it`);
    }
    return Object.assign(new type(), body);
  }

  /** The body as a stream of bytes (a request without content length, or the first uploaded file). */
  getStream(): Readable | undefined {
    return this.data.stream;
  }

  /** Id of the body stream, for logs and for passing the stream on. */
  getStreamRoute(): string | undefined {
    return this.data.streamRoute;
  }

  getFiles(): readonly UploadedFile[] {
    return this.data.files ?? [];
  }

  /** Name of the first uploaded file. */
  getFileName(): string | undefined {
    return this.data.files?.[0]?.fileName;
  }

  getFileNames(): string[] {
    return this.getFiles().map((f) => f.fileName);
  }

  getFileContentTypes(): string[] {
    return this.getFiles().map((f) => f.contentType);
  }

  getFileSizes(): number[] {
    return this.getFiles().map((f) => f.size);
  }

  /** The endpoint timeout in seconds (what the caller still waits for an answer). */
  getTimeoutSeconds(): number | undefined {
    return this.data.timeoutSeconds;
  }

  /** The request as plain data, for functions that want an untyped map. */
  toMap(): Readonly<HttpRequestData> {
    return this.data;
  }
}

/** The request's own entry only: `constructor` or `toString` is not found unless it was sent. */
function lookup<T>(map: Record<string, T>, name: string): T | undefined {
  const direct = Object.hasOwn(map, name) ? map[name] : undefined;
  if (direct !== undefined) return direct;
  const wanted = name.toLowerCase();
  for (const key of Object.keys(map)) if (key.toLowerCase() === wanted) return map[key];
  return undefined;
}
