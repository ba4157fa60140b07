/**
 * The call boundary: what a function declared as its `input` (FunctionInput in @gatehouse/functions,
 * Mercury's input type of `TypedLambdaFunction<I, O>`), made of what its caller has. An endpoint's
 * callers (the target, the authentication function, secondaries, the static filter, health
 * dependencies) have the request; a flow task has its mapped body. A function that declares nothing
 * gets what the caller has, as it is (no conversion on the hot path).
 */
import {
  AppException,
  AsyncHttpRequest,
  EventEnvelope,
  type EventHeaders,
  type FunctionInput,
  type HttpRequestData,
  type QueryValue,
} from '@gatehouse/functions';

/** The input for a function called with an HTTP request. */
export function inputOfRequest(
  kind: FunctionInput | undefined,
  headers: EventHeaders,
  request: AsyncHttpRequest,
): unknown {
  if (kind === undefined || kind === 'http-request') return request;
  // Mercury's event body for an endpoint is the request as a map: `map` gets it, `envelope` carries it.
  const map = request.toMap();
  return kind === 'map' ? map : envelopeOf(headers, map);
}

/** The input for a function called by a flow task with the body its input mapping built. */
export function inputOfBody(
  kind: FunctionInput | undefined,
  headers: EventHeaders,
  body: unknown,
  route: string,
): unknown {
  if (kind === undefined) return body;
  if (kind === 'envelope') return envelopeOf(headers, body);
  if (!isPlainMap(body)) {
    const wanted = kind === 'map' ? 'a map' : 'an HTTP request (a map)';
    throw new AppException(400, `Function ${route} takes ${wanted}; its input is ${describe(body)}`);
  }
  return kind === 'map' ? body : requestOf(body);
}

/** The event as an envelope: its headers, its body and what the headers say about it. */
function envelopeOf(headers: EventHeaders, body: unknown): EventEnvelope {
  const envelope = new EventEnvelope().setBody(body);
  for (const [name, value] of Object.entries(headers)) envelope.setHeader(name, value);
  const route = headers['my_route'];
  if (route !== undefined) envelope.setTo(route);
  const cid = headers['my_correlation_id'];
  if (cid !== undefined) envelope.setCorrelationId(cid);
  const traceId = headers['my_trace_id'];
  if (traceId !== undefined) envelope.setTrace(traceId, headers['my_trace_path'] ?? '');
  return envelope;
}

/**
 * An AsyncHttpRequest of a map with `toMap()`'s keys, as Mercury makes one of a map: text fields
 * that are not text and maps that are not maps are left out, header names lower-cased.
 */
function requestOf(map: Record<string, unknown>): AsyncHttpRequest {
  const data: HttpRequestData = {
    method: text(map['method'])?.toUpperCase() ?? 'GET',
    url: text(map['url']) ?? '/',
    ip: text(map['ip']) ?? '',
    https: map['https'] === true,
    headers: textMap(map['headers'], true) ?? {},
  };
  const cookies = textMap(map['cookies']);
  if (cookies) data.cookies = cookies;
  const session = textMap(map['session']);
  if (session) data.session = session;
  const pathParameters = textMap(map['pathParameters']);
  if (pathParameters) data.pathParameters = pathParameters;
  const queryParameters = queryMap(map['queryParameters']);
  if (queryParameters) data.queryParameters = queryParameters;
  const queryString = text(map['queryString']);
  if (queryString !== undefined) data.queryString = queryString;
  if (map['body'] !== undefined) data.body = map['body'];
  const timeout = map['timeoutSeconds'];
  if (typeof timeout === 'number' && timeout > 0) data.timeoutSeconds = timeout;
  return new AsyncHttpRequest(data);
}

function isPlainMap(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return 'empty';
  if (Array.isArray(value)) return 'a list';
  if (Buffer.isBuffer(value)) return 'bytes';
  return typeof value === 'object' ? 'not a plain map' : `a ${typeof value}`;
}

/** Strings as they are, numbers and booleans as text (a mapping may build either). */
function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

function textMap(value: unknown, lowerCase = false): Record<string, string> | undefined {
  if (!isPlainMap(value)) return undefined;
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(value)) {
    const t = text(v);
    if (t !== undefined && name !== '__proto__') out[lowerCase ? name.toLowerCase() : name] = t;
  }
  return out;
}

function queryMap(value: unknown): Record<string, QueryValue> | undefined {
  if (!isPlainMap(value)) return undefined;
  const out: Record<string, QueryValue> = {};
  for (const [name, v] of Object.entries(value)) {
    if (name === '__proto__') continue;
    if (Array.isArray(v)) out[name] = v.map(text).filter((t): t is string => t !== undefined);
    else {
      const t = text(v);
      if (t !== undefined) out[name] = t;
    }
  }
  return out;
}
