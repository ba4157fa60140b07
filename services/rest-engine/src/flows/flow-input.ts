/**
 * The input dataset of a flow started by `http.flow.adapter` (`input.*` in its mappings), built from
 * the request as Mercury's HttpToFlow does: method, uri, header (lower-cased names), cookie,
 * path_parameter (lower-cased names), query (a repeated name → list), body, stream, ip, filename,
 * session and ttl (the instance's deadline in ms). `url` is the same as `uri`, for Gatehouse users.
 */
import type { HttpRequestData } from '@gatehouse/functions';

export function flowInputOf(data: HttpRequestData, ttlMs: number): Record<string, unknown> {
  // The request's own maps, not copies: they are made for this request alone, mappings only read
  // `input.*` (what goes into the model is deep-copied), and nothing reads them after the flow.
  return {
    method: data.method.toUpperCase(),
    uri: data.url,
    url: data.url,
    header: data.headers,
    cookie: data.cookies ?? {},
    path_parameter: data.pathParameters === undefined ? {} : lowerCased(data.pathParameters),
    query: data.queryParameters ?? {},
    body: data.body ?? null,
    stream: data.streamRoute ?? null,
    ip: data.ip,
    filename: data.files?.[0]?.fileName ?? null,
    session: data.session ?? {},
    ttl: ttlMs,
  };
}

function lowerCased(map: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(map)) out[name.toLowerCase()] = value;
  return out;
}

/**
 * The instance's deadline: the endpoint's `timeout` when rest.yaml sets one (Mercury's adapter
 * rule), else the flow's own `ttl`; a client's `x-ttl` (ms) can only shorten it.
 */
export function flowDeadlineMs(
  endpointTimeoutMs: number | undefined,
  flowTtlMs: number,
  headers: Record<string, string>,
): number {
  const base = endpointTimeoutMs ?? flowTtlMs;
  const asked = Number(headers['x-ttl']);
  return Number.isInteger(asked) && asked > 0 && asked < base ? asked : base;
}
