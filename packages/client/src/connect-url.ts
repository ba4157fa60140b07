/** The URL of a connection endpoint with the connect's query parameters. */
import type { ConnectParams } from './transports/transport.ts';

export function connectUrl(
  params: ConnectParams,
  endpoint: string,
  extra: Record<string, string | undefined> = {},
): URL {
  const url = new URL(`/_gw/v1/connection/${endpoint}`, params.base);
  const query: Record<string, string | undefined> = {
    subscriptions: params.subscriptions && JSON.stringify(params.subscriptions),
    connectionToken: params.connectionToken,
    // A position is newer than the rewind it may have started from: the gateway ignores it then.
    rewind: params.rewind && params.lastEventId === undefined ? String(params.rewind) : undefined,
    latest: params.latest && params.lastEventId === undefined ? 'true' : undefined,
    ackSession: params.ackSession,
    ...extra,
  };
  for (const [name, value] of Object.entries(query))
    if (value !== undefined) url.searchParams.set(name, value);
  return url;
}

export function bearer(token: string | undefined): Record<string, string> {
  return token === undefined ? {} : { authorization: `Bearer ${token}` };
}
