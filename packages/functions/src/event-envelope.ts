/**
 * What a function returns when a plain body is not enough: an HTTP status, response headers and a
 * body. Header names are lower-cased; `set-cookie` may carry several values.
 *
 * Also what a function declared with `input: 'envelope'` receives: the event as the engine sends it,
 * with its headers, its body, the route it is for (`getTo`), the correlation id and, on traced
 * requests, the trace id and path (define-function.ts, FunctionInput).
 */
const envelopeMark = Symbol.for('gatehouse.functions.EventEnvelope');

export type HeaderValue = string | string[];

export class EventEnvelope {
  readonly [envelopeMark] = true;
  private status: number | undefined;
  private readonly headers: Record<string, HeaderValue> = {};
  private body: unknown;
  private to: string | undefined;
  private correlationId: string | undefined;
  private traceId: string | undefined;
  private tracePath: string | undefined;

  setStatus(status: number): this {
    if (!Number.isInteger(status) || status < 100 || status > 599) {
      throw new RangeError(`status must be an HTTP status (100-599), got ${status}`);
    }
    this.status = status;
    return this;
  }

  /** The status set with setStatus, or undefined (the engine then answers 200). */
  getStatus(): number | undefined {
    return this.status;
  }

  /** Sets (replaces) a header; CR and LF are stripped so a value cannot split the response. */
  setHeader(name: string, value: HeaderValue | number | boolean): this {
    const clean = Array.isArray(value) ? value.map(stripNewlines) : stripNewlines(String(value));
    this.headers[name.toLowerCase()] = clean;
    return this;
  }

  /** Adds a value to a header that may repeat, such as `set-cookie`. */
  addHeader(name: string, value: string): this {
    const key = name.toLowerCase();
    const prior = this.headers[key];
    const clean = stripNewlines(value);
    this.headers[key] = prior === undefined ? clean : [...(Array.isArray(prior) ? prior : [prior]), clean];
    return this;
  }

  getHeader(name: string): HeaderValue | undefined {
    return this.headers[name.toLowerCase()];
  }

  getHeaders(): Readonly<Record<string, HeaderValue>> {
    return this.headers;
  }

  setBody(body: unknown): this {
    this.body = body;
    return this;
  }

  getBody(): unknown {
    return this.body;
  }

  /** The route the event is for. */
  setTo(route: string): this {
    this.to = route;
    return this;
  }

  getTo(): string | undefined {
    return this.to;
  }

  setCorrelationId(id: string): this {
    this.correlationId = id;
    return this;
  }

  getCorrelationId(): string | undefined {
    return this.correlationId;
  }

  /** The trace id and path of a traced request (`my_trace_id`, `my_trace_path`). */
  setTrace(id: string, path: string): this {
    this.traceId = id;
    this.tracePath = path;
    return this;
  }

  getTraceId(): string | undefined {
    return this.traceId;
  }

  getTracePath(): string | undefined {
    return this.tracePath;
  }
}

/** True for an EventEnvelope, also one made by another copy of this module. */
export function isEventEnvelope(value: unknown): value is EventEnvelope {
  return (
    value instanceof EventEnvelope || (typeof value === 'object' && value !== null && envelopeMark in value)
  );
}

function stripNewlines(text: string): string {
  return text.includes('\r') || text.includes('\n') ? text.replace(/[\r\n]/g, '') : text;
}
