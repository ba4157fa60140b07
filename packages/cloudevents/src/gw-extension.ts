/**
 * Reading and setting the `gw` extension object of an event (its shape, GwExtension, is part of the
 * model in cloud-event.ts).
 *
 * The proxy adds the data of the request that produced an event (`remoteIp`, `host`, `port`,
 * `scheme`, `method`, `path`, `query`, `headers`) and the correlation id when it waits for a
 * response. Unlike RIG, which overwrote the whole extension, setting connection data keeps the
 * producer's `target_partition`, the correlation id and any other keys.
 */
import type { CloudEvent, GwConnectionData, GwExtension } from './cloud-event.ts';
import { headerText } from './header-text.ts';
import { isObject } from './json-object.ts';

const connectionKeys: readonly (keyof GwConnectionData)[] = [
  'remoteIp',
  'host',
  'port',
  'scheme',
  'method',
  'path',
  'query',
  'headers',
];

/** The event's `gw` object, or undefined when absent or not an object. */
export function gwExtension(event: CloudEvent): GwExtension | undefined {
  return isObject(event.gw) ? event.gw : undefined;
}

export function correlationId(event: CloudEvent): string | undefined {
  return nonEmptyString(gwExtension(event)?.correlation);
}

export function targetPartition(event: CloudEvent): string | undefined {
  return nonEmptyString(gwExtension(event)?.target_partition);
}

/**
 * A copy of the event whose `gw` object has the patch merged in; a key patched to undefined is
 * removed, and an extension left empty is dropped.
 */
export function withGw<E extends CloudEvent>(event: E, patch: Partial<GwExtension>): E {
  const gw: Record<string, unknown> = { ...gwExtension(event), ...patch };
  for (const [key, value] of Object.entries(gw)) if (value === undefined) delete gw[key];
  const { gw: _old, ...rest } = event;
  return (Object.keys(gw).length > 0 ? { ...rest, gw } : rest) as E;
}

export function withCorrelation<E extends CloudEvent>(event: E, correlation: string | undefined): E {
  return withGw(event, { correlation });
}

export function withTargetPartition<E extends CloudEvent>(event: E, partition: string | undefined): E {
  return withGw(event, { target_partition: partition });
}

/** Replaces every connection key (one missing from `data` is removed) and keeps all other keys. */
export function withConnectionData<E extends CloudEvent>(event: E, data: GwConnectionData): E {
  const patch: Partial<GwExtension> = {};
  for (const key of connectionKeys) patch[key] = data[key] as never;
  return withGw(event, patch);
}

/** The request shape node:http's IncomingMessage has; a plain object works too. */
export interface RequestLike {
  method?: string | undefined;
  url?: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  socket?: { remoteAddress?: string | undefined; localPort?: number | undefined; encrypted?: boolean };
}

export function connectionDataFromRequest(req: RequestLike): GwConnectionData {
  const headers = headerText(req.headers);
  const scheme = req.socket?.encrypted ? 'https' : 'http';
  const url = req.url ?? '/';
  const queryStart = url.indexOf('?');
  const data: GwConnectionData = {
    scheme,
    method: req.method,
    path: queryStart === -1 ? url : url.slice(0, queryStart),
    query: queryStart === -1 ? '' : url.slice(queryStart + 1),
    headers,
  };
  const remoteIp = req.socket?.remoteAddress?.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  if (remoteIp) data.remoteIp = remoteIp;
  Object.assign(data, hostAndPort(headers['host'], scheme, req.socket?.localPort));
  if (data.method === undefined) delete data.method;
  return data;
}

function hostAndPort(
  hostHeader: string | undefined,
  scheme: 'http' | 'https',
  localPort: number | undefined,
): Pick<GwConnectionData, 'host' | 'port'> {
  const defaultPort = scheme === 'https' ? 443 : 80;
  if (hostHeader === undefined) return localPort === undefined ? {} : { port: localPort };
  if (!URL.canParse(`${scheme}://${hostHeader}`)) return { host: hostHeader };
  const parsed = new URL(`${scheme}://${hostHeader}`);
  return { host: parsed.hostname, port: parsed.port === '' ? defaultPort : Number(parsed.port) };
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
