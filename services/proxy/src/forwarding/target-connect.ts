/**
 * Connections to HTTP targets go only where PROXY_TARGET_ALLOW lets them (target-allow-list.ts),
 * judged on the address actually connected to: an address literal before connecting, a name in
 * the DNS lookup of the connect itself. Checking a name when the definition is written, or
 * resolving it apart from the connect, would let DNS answer differently in between (rebinding).
 * Both forwarders use this: undici's connector for requests, node:http's `lookup` for upgrades.
 */
import dns, { type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import type { TargetAllowList } from './target-allow-list.ts';

/** The client's 502 body: the target is misconfigured, not down (the address stays in the log). */
export const refusedTargetAnswer = "Bad gateway: the target's address is not allowed.";

/** A connection the allow-list refused: the client gets 502, the log says which address and why. */
export class TargetRefusedError extends Error {
  readonly code = 'GW_TARGET_REFUSED';
  readonly host: string;
  readonly reason: string;

  constructor(host: string, reason: string) {
    super(`target ${host} refused: ${reason}, and PROXY_TARGET_ALLOW does not list it`);
    this.name = 'TargetRefusedError';
    this.host = host;
    this.reason = reason;
  }
}

/** The refusal of an address literal (net.connect skips the lookup for one), or undefined. */
export function refusalOfLiteral(allow: TargetAllowList, hostname: string): TargetRefusedError | undefined {
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (isIP(host) === 0) return undefined;
  const reason = allow.refusalOfAddress(host, host);
  return reason === undefined ? undefined : new TargetRefusedError(host, reason);
}

/**
 * dns.lookup, then every address the name resolved to must be allowed (a name answering with one
 * public and one private address is refused, not half-used). Read through the module object at
 * each call, as net.connect's own default lookup is.
 */
export function guardedLookup(allow: TargetAllowList): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      for (const { address } of addresses) {
        const reason = allow.refusalOfAddress(hostname, address);
        if (reason !== undefined) return callback(new TargetRefusedError(hostname, reason), '', 0);
      }
      if ((options as LookupOptions).all) return (callback as AllCallback)(null, addresses);
      const [first] = addresses;
      callback(null, first?.address ?? '', first?.family ?? 0);
    });
  };
}

type AllCallback = (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void;

/** undici's connector with the allow-list on the literal and on the lookup. */
export function guardedConnector(
  allow: TargetAllowList,
  options: buildConnector.BuildOptions,
): buildConnector.connector {
  const connect = buildConnector({ ...options, lookup: guardedLookup(allow) } as buildConnector.BuildOptions);
  return (opts, callback) => {
    const refused = refusalOfLiteral(allow, opts.hostname);
    if (refused === undefined) return connect(opts, callback);
    callback(refused, null);
  };
}
