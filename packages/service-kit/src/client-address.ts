/**
 * The address of the client behind a request. A request from a trusted proxy (TRUSTED_PROXIES:
 * the edge nginx, an ingress controller, a load balancer) names its client in X-Forwarded-For;
 * the client is the rightmost address there that is not itself a trusted proxy, since each proxy
 * appends the address it got the request from and anything further left was written by the client.
 * A request from anyone else is taken at its peer address: its X-Forwarded-For is the client's own
 * word and is ignored.
 */
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { commaSeparated, type Field } from './env-config.ts';

export function clientAddress(req: IncomingMessage, trusted: BlockList | undefined): string {
  const peer = peerAddress(req);
  if (!trusted || !isTrustedAddress(trusted, peer)) return peer;
  const header = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((h) => plain(h.trim()))
    .filter((h) => isIP(h) !== 0);
  for (let i = hops.length - 1; i >= 0; i--) if (!isTrustedAddress(trusted, hops[i]!)) return hops[i]!;
  return hops[0] ?? peer;
}

/** The address of the socket's other end (an IPv4 client of a dual-stack socket as plain IPv4). */
export function peerAddress(req: IncomingMessage): string {
  return plain(req.socket?.remoteAddress ?? '');
}

/** A comma-separated list of addresses and CIDR ranges (`10.0.0.0/8`, `fd00::/8`, `127.0.0.1`). */
export function addressRanges(description: string): Field<BlockList | undefined> {
  return {
    description,
    defaultText: '(empty)',
    parse(raw) {
      const entries = commaSeparated(raw);
      if (entries.length === 0) return undefined;
      const list = new BlockList();
      for (const entry of entries) addRange(list, entry);
      return list;
    },
  };
}

function addRange(list: BlockList, entry: string): void {
  const [address, prefix, extra] = entry.split('/');
  const family = isIP(address ?? '');
  const bits = prefix === undefined ? (family === 6 ? 128 : 32) : Number(prefix);
  const max = family === 6 ? 128 : 32;
  if (family === 0 || extra !== undefined || !Number.isInteger(bits) || bits < 0 || bits > max)
    throw new Error(`"${entry}" is not an IP address or CIDR range`);
  list.addSubnet(address!, bits, family === 6 ? 'ipv6' : 'ipv4');
}

/** Whether an address is in the list (false for anything that is not an IP address). */
export function isTrustedAddress(list: BlockList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** An IPv4 client of a dual-stack socket as plain IPv4. */
function plain(address: string): string {
  return address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
}
