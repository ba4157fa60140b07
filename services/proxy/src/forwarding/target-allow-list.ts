/**
 * Which addresses an HTTP target may have (PROXY_TARGET_ALLOW). Whoever can write API definitions
 * could otherwise put the cloud metadata service (169.254.169.254), the proxy's own internal API
 * on loopback, or the cluster's Redis and Kafka on the public edge. So by default a target must be
 * a public unicast address: loopback, link-local, private (RFC 1918, fc00::/7), carrier-grade NAT,
 * multicast, unspecified and the other special ranges are refused, an IPv4-mapped IPv6 address as
 * the IPv4 address it carries.
 *
 * The operator's list lets targets in: a CIDR or address (the address a name resolves to is then
 * accepted), a host name (`rest-engine`, taken whatever it resolves to), `*.domain` (its
 * subdomains), or `*` (everything: for setups where every definition writer is trusted).
 *
 * The check runs on the address connected to (target-connect.ts), after resolution, so a name
 * that resolves to a public address when defined and to 127.0.0.1 later (DNS rebinding) is caught.
 * Definitions are also checked as they are written, for what their text alone settles: an
 * address literal, and `localhost`, which always resolves to loopback (RFC 6761).
 */
import { type Field, list } from '@gatehouse/service-kit';
import ipaddr from 'ipaddr.js';

export const targetAllowSetting = (): Field<string[]> => {
  const entries = list(
    'what HTTP targets may be besides public addresses: CIDRs, addresses, host names, *.domain, or * for everything (comma list)',
  );
  return {
    ...entries,
    parse(raw) {
      const parsed = entries.parse(raw);
      new TargetAllowList(parsed);
      return parsed;
    },
  };
};

type Address = ipaddr.IPv4 | ipaddr.IPv6;

const rangeNames: Record<string, string> = {
  loopback: 'a loopback',
  linkLocal: 'a link-local (cloud metadata services live here)',
  private: 'a private',
  uniqueLocal: 'a private (unique local)',
  carrierGradeNat: 'a shared (carrier-grade NAT)',
  unspecified: 'an unspecified',
};

export class TargetAllowList {
  private readonly everything: boolean;
  private readonly names = new Set<string>();
  private readonly suffixes: string[] = [];
  private readonly ranges: Array<[Address, number]> = [];

  /** Entries as PROXY_TARGET_ALLOW holds them; an invalid one throws a message naming it. */
  constructor(entries: readonly string[] = []) {
    this.everything = entries.includes('*');
    for (const raw of entries) {
      const entry = raw.trim().toLowerCase();
      if (entry === '*') continue;
      if (ipaddr.isValidCIDR(entry)) this.ranges.push(ipaddr.parseCIDR(entry));
      else if (isAddress(entry)) {
        const address = ipaddr.parse(entry);
        this.ranges.push([address, address.kind() === 'ipv4' ? 32 : 128]);
      } else if (entry.startsWith('*.') && isHostName(entry.slice(2))) this.suffixes.push(entry.slice(1));
      else if (isHostName(entry)) this.names.add(entry);
      else
        throw new Error(
          `${JSON.stringify(raw)} is not a CIDR, an address, a host name, *.domain or * (comma-separated list)`,
        );
    }
  }

  /**
   * Why a target host, as a definition gives it (a URL's hostname), can never be connected to;
   * undefined when it may be (a name is checked again on every connection).
   */
  refusalOfHost(host: string): string | undefined {
    const name = plainHost(host);
    if (this.allowsName(name)) return undefined;
    if (isAddress(name)) return this.refusalOfAddress(name, name);
    if (name === 'localhost' || name.endsWith('.localhost')) return `${name} is a loopback name`;
    return undefined;
  }

  /** Why a connection to `address`, which `host` resolved to, is refused; undefined: allowed. */
  refusalOfAddress(host: string, address: string): string | undefined {
    if (this.allowsName(plainHost(host))) return undefined;
    const parsed = ipaddr.process(address);
    if (this.ranges.some((range) => sameKind(parsed, range[0]) && parsed.match(range))) return undefined;
    const range = parsed.range();
    if (range === 'unicast') return undefined;
    return `${address} is ${rangeNames[range] ?? `a special-purpose (${range})`} address`;
  }

  private allowsName(name: string): boolean {
    return this.everything || this.names.has(name) || this.suffixes.some((s) => name.endsWith(s));
  }
}

/** Lower case, without IPv6 brackets and a trailing root dot. */
function plainHost(host: string): string {
  let name = host.toLowerCase();
  if (name.startsWith('[') && name.endsWith(']')) name = name.slice(1, -1);
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

/** An address as Node and URLs write one (dotted quad or IPv6), not ipaddr.js's looser forms. */
function isAddress(text: string): boolean {
  return ipaddr.IPv4.isValidFourPartDecimal(text) || (text.includes(':') && ipaddr.IPv6.isValid(text));
}

function isHostName(text: string): boolean {
  return /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/.test(
    text,
  );
}

function sameKind(a: Address, b: Address): boolean {
  return a.kind() === b.kind();
}
