/**
 * The key a client address is counted under by the per-address limits (address-budget.ts,
 * connection-places.ts) and bound into connection tokens (reconnect-evidence.ts): an IPv4 address
 * as it is (also when written as IPv4-mapped IPv6), an IPv6 address by its /64 prefix, since one
 * host usually holds a whole /64.
 */
export function addressKey(address: string): string {
  if (!address.includes(':')) return address;
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (v4) return v4[1]!;
  return expandIpv6(address).slice(0, 4).join(':');
}

function expandIpv6(address: string): string[] {
  const [head, tail] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''));
}
