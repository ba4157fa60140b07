/**
 * What of a request's credentials a published event may carry. The connection data in `gw` goes to
 * every consumer of a topic (and into broker retention), so by default it loses the headers that
 * carry credentials (`Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie`, and the API's
 * own token header `auth.header_name`) and the API's token query parameter (`auth.query_name`). An
 * endpoint whose consumers need them sets `publish_credentials: true`.
 */
import type { GwConnectionData } from '@gatehouse/cloudevents';
import type { AuthSettings } from '../definitions/index.ts';

const credentialHeaders = ['authorization', 'proxy-authorization', 'cookie', 'set-cookie'];

export function withoutCredentials(data: GwConnectionData, auth: AuthSettings): GwConnectionData {
  const out = { ...data };
  if (data.headers !== undefined) {
    const drop = new Set(credentialHeaders);
    if (auth.use_header) drop.add(auth.header_name.toLowerCase());
    out.headers = Object.fromEntries(Object.entries(data.headers).filter(([name]) => !drop.has(name)));
  }
  if (data.query !== undefined && auth.use_query) out.query = withoutParameter(data.query, auth.query_name);
  return out;
}

/** The query string without the named parameter; the other parameters stay exactly as sent. */
function withoutParameter(query: string, name: string): string {
  if (query === '') return query;
  return query
    .split('&')
    .filter((pair) => parameterName(pair) !== name)
    .join('&');
}

function parameterName(pair: string): string {
  const raw = pair.split('=', 1)[0]!.replaceAll('+', ' ');
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
